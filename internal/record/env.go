package record

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// CollectEnvironment describes this machine and build. Whatever cannot be
// read (no /proc, no build info) is left empty rather than guessed.
func CollectEnvironment() Environment {
	env := Environment{
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
	}
	env.Hostname, _ = os.Hostname()
	env.Version, env.Commit = BuildVersion()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		env.CPUModel = cpuModel(f)
		f.Close()
	}
	env.LoadAvg1 = LoadAverage()
	if f, err := os.Open("/proc/meminfo"); err == nil {
		env.MemoryMiB = memTotalMiB(f)
		f.Close()
	}
	return env
}

// linkVersion and linkCommit are set at link time by README's build
// command (-ldflags "-X …/internal/record.linkVersion=… -X
// …/internal/record.linkCommit=…"); they win over the build info, which
// a build with -buildvcs=false (or from a tarball) does not carry. Never
// assigned at run time.
var linkVersion, linkCommit string

// BuildVersion returns the version and commit of this binary: those set
// at link time, else the module version and VCS revision the Go toolchain
// embedded (a commit with uncommitted changes ends in "-dirty"), else
// "devel"/"unknown".
func BuildVersion() (version, commit string) {
	info, _ := debug.ReadBuildInfo()
	return buildVersion(info, linkVersion, linkCommit)
}

func buildVersion(info *debug.BuildInfo, ldVersion, ldCommit string) (version, commit string) {
	version, commit = "devel", "unknown"
	if info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && commit != "unknown" {
			commit += "-dirty"
		}
	}
	if ldVersion != "" {
		version = ldVersion
	}
	if ldCommit != "" {
		commit = ldCommit
	}
	return version, commit
}

// cpuModel returns the first "model name" (x86) or "Model"/"Hardware"
// (arm) value of a /proc/cpuinfo listing.
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	fallback := ""
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			return v
		case "Model", "Hardware":
			if fallback == "" {
				fallback = v
			}
		}
	}
	return fallback
}

// memTotalMiB parses MemTotal (kB) of a /proc/meminfo listing.
func memTotalMiB(r io.Reader) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// LoadAverage returns the 1-minute load average of /proc/loadavg (0 when
// it cannot be read).
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
