package record

import (
	"os"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name                string
		info                *debug.BuildInfo
		ldVersion, ldCommit string
		version, commit     string
	}{
		{"no build info", nil, "", "", "devel", "unknown"},
		{"-buildvcs=false, no ldflags", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "", "devel", "unknown"},
		{"-buildvcs=false with README's ldflags", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "v0.4.0-3-gabc1234", "abc1234def", "v0.4.0-3-gabc1234", "abc1234def"},
		{"a git checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "9b16400", "vcs.modified", "false")}, "", "", "devel", "9b16400"},
		{"uncommitted changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "9b16400", "vcs.modified", "true")}, "", "", "devel", "9b16400-dirty"},
		{"go install @version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "", "", "v1.2.3", "unknown"},
		{"ldflags win", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: vcs("vcs.revision", "aaaa")}, "v1.2.4", "bbbb", "v1.2.4", "bbbb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, c := buildVersion(tc.info, tc.ldVersion, tc.ldCommit)
			if v != tc.version || c != tc.commit {
				t.Errorf("got %s (commit %s), want %s (commit %s)", v, c, tc.version, tc.commit)
			}
		})
	}
}

// TestREADMEBuildStampsVersion: README's build command sets the two
// link-time variables BuildVersion reads, by their full names (a rename
// here would silently stop the stamp: -X of a missing symbol is no error).
func TestREADMEBuildStampsVersion(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	build := regexp.MustCompile("(?m)^go build .*-ldflags \"([^\"]*)\".*\\./cmd/sagebench$").FindSubmatch(b)
	if build == nil {
		t.Fatal("README.md has no `go build … -ldflags \"…\" … ./cmd/sagebench` line")
	}
	for _, sym := range []string{"linkVersion", "linkCommit"} {
		if !regexp.MustCompile(`-X github\.com/sagebench/sagebench/internal/record\.` + sym + `=\S`).Match(build[1]) {
			t.Errorf("README's -ldflags %q do not set internal/record.%s", build[1], sym)
		}
	}
	_ = linkVersion + linkCommit // the symbols the flags name exist
}
