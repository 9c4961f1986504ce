package micro

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/fedavg"
)

// Options selects and paces a run of the benchmark cases from a binary.
// The zero value (after setting Suite) runs every case once for 1s at the
// current GOMAXPROCS, like `go test -bench .`.
type Options struct {
	Suite     string         // fedavg, codec or all
	Count     int            // runs of each case; 0 means 1
	Benchtime string         // like go test -benchtime: "1s" or "100x"; "" means 1s
	CPU       int            // GOMAXPROCS for the run; 0 keeps the current value
	Filter    *regexp.Regexp // matched against the full name (in either scheme); nil runs all
	// Names is the naming scheme of the printed names: "sagebench" (the
	// default, also "") or "mohawk" (the FedAvg matrix under the
	// Sovereign-Mohawk contract's names, so its cached baselines compare).
	Names string
	// Auto resolves workers=auto: "probe" (the default, also "") measures
	// the machine with fedavg.Probe, "fallback" takes the constant model.
	Auto string
	// MachineCache is the file a probe is cached in, keyed by CPU,
	// kernels and GOMAXPROCS, and revalidated at every start; "" probes
	// every run.
	MachineCache string
	// ProbeMaxAge is how long a cached probe lives; 0 means
	// DefaultProbeMaxAge.
	ProbeMaxAge time.Duration
	// Log receives one line saying how workers=auto was resolved; nil
	// discards it.
	Log io.Writer

	// probeConfig paces the probe (tests simulate machines with its
	// Trial); clock is the time of the cache's bookkeeping (nil: time.Now).
	probeConfig fedavg.ProbeConfig
	clock       func() time.Time
}

func (o Options) now() time.Time {
	if o.clock != nil {
		return o.clock()
	}
	return time.Now()
}

func (o Options) probeMaxAge() time.Duration {
	if o.ProbeMaxAge > 0 {
		return o.ProbeMaxAge
	}
	return DefaultProbeMaxAge
}

// Validate checks the options before anything runs.
func (o Options) Validate() error {
	if _, err := Cases(o.Suite); err != nil {
		return err
	}
	if o.Count < 0 {
		return fmt.Errorf("count %d must be >= 1", o.Count)
	}
	if o.CPU < 0 {
		return fmt.Errorf("cpu %d must be >= 1 (0 keeps GOMAXPROCS)", o.CPU)
	}
	if o.ProbeMaxAge < 0 {
		return fmt.Errorf("probe max age %v must be >= 0 (0 takes %v)", o.ProbeMaxAge, DefaultProbeMaxAge)
	}
	if o.Auto != "" && o.Auto != AutoProbe && o.Auto != AutoFallback {
		return fmt.Errorf("auto %q: want %s or %s", o.Auto, AutoProbe, AutoFallback)
	}
	if o.Names != "" && o.Names != NamesSagebench && o.Names != NamesMohawk {
		return fmt.Errorf("names %q: want %s or %s", o.Names, NamesSagebench, NamesMohawk)
	}
	return checkBenchtime(o.Benchtime)
}

func checkBenchtime(s string) error {
	if s == "" {
		return nil
	}
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if v, err := strconv.Atoi(n); err != nil || v < 1 {
			return fmt.Errorf("benchtime %q: want a duration like 50ms or an iteration count like 100x", s)
		}
		return nil
	}
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return fmt.Errorf("benchtime %q: want a duration like 50ms or an iteration count like 100x", s)
	}
	return nil
}

// ErrNoMatch is returned by Run when the filter selects no case.
var ErrNoMatch = errors.New("no benchmark matches the filter")

// runMu serialises Run: testing.Benchmark reads its pacing from the
// process-wide test.benchtime flag and the run sets GOMAXPROCS.
var runMu sync.Mutex

// Run runs the selected cases with testing.Benchmark and writes Go
// benchmark format to w: a goos/goarch/pkg/cpu header, then one line per
// case and repetition. It stops between cases when ctx is cancelled.
func Run(ctx context.Context, w io.Writer, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	fx := &fixture{resolve: func() ProbeInfo { return ResolveProbe(o, false) }}
	selected, _ := cases(o.Suite, fx)
	if o.Filter != nil {
		selected = filterCases(selected, o.Filter)
	}
	if len(selected) == 0 {
		return fmt.Errorf("%w %q in suite %s", ErrNoMatch, o.Filter, o.Suite)
	}
	runMu.Lock()
	defer runMu.Unlock()
	restore, err := pace(o) // first: the probe is for the run's GOMAXPROCS
	if err != nil {
		return err
	}
	defer restore()
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	writeHeader(bw)
	if slices.ContainsFunc(selected, isAuto) {
		p := fx.probe() // probe before any timing, and name it first
		if o.Log != nil {
			fmt.Fprintf(o.Log, "micro: workers=auto: %s\n", p.Summary())
		}
		writeProbeLines(bw, p)
	}
	return runCases(ctx, bw, selected, max(o.Count, 1), o.Names)
}

func isAuto(c Case) bool { return c.Bench == "Aggregate" && strings.HasSuffix(c.Sub, "/workers=auto") }

func filterCases(cases []Case, re *regexp.Regexp) []Case {
	var out []Case
	for _, c := range cases {
		if re.MatchString(c.Name()) || (c.Mohawk != "" && re.MatchString(c.Mohawk)) {
			out = append(out, c)
		}
	}
	return out
}

// pace sets test.benchtime and GOMAXPROCS for the run and returns a
// function restoring both.
func pace(o Options) (func(), error) {
	testing.Init()
	fl := flag.Lookup("test.benchtime")
	if fl == nil {
		return nil, errors.New("testing flags not registered")
	}
	old := fl.Value.String()
	bt := o.Benchtime
	if bt == "" {
		bt = "1s"
	}
	if err := fl.Value.Set(bt); err != nil {
		return nil, fmt.Errorf("benchtime %q: %w", bt, err)
	}
	procs := runtime.GOMAXPROCS(0)
	if o.CPU > 0 {
		runtime.GOMAXPROCS(o.CPU)
	}
	return func() {
		_ = fl.Value.Set(old)
		runtime.GOMAXPROCS(procs)
	}, nil
}

func runCases(ctx context.Context, w *bufio.Writer, cases []Case, count int, names string) error {
	suffix := ""
	if p := runtime.GOMAXPROCS(0); p != 1 {
		suffix = fmt.Sprintf("-%d", p)
	}
	width := 0
	for _, c := range cases {
		width = max(width, len(c.NameIn(names))+len(suffix))
	}
	for _, c := range cases {
		for range count {
			if err := ctx.Err(); err != nil {
				return err
			}
			r := testing.Benchmark(c.Run)
			if r.N == 0 {
				return fmt.Errorf("%s failed (run it with go test -bench for its log)", c.Name())
			}
			fmt.Fprintf(w, "%-*s\t%s\t%s\n", width, c.NameIn(names)+suffix, r.String(), r.MemString())
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeHeader prints the configuration lines go test prints.
func writeHeader(w io.Writer) {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: %s\n", runtime.GOOS, runtime.GOARCH, reflect.TypeFor[Case]().PkgPath())
	if name := cpuName(); name != "" {
		fmt.Fprintf(w, "cpu: %s\n", name)
	}
}

// cpuName is the processor model from /proc/cpuinfo, or "" elsewhere.
// (go test prints the CPUID brand string, which may be worded differently.)
func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
