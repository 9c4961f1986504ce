package cli

import (
	"runtime"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
)

// TestVersionSaysCommitAndGo: `sagebench version` prints the version and
// commit the build carries (record.BuildVersion: the -ldflags stamp, else
// the toolchain's vcs.revision with -dirty) and the Go version.
func TestVersionSaysCommitAndGo(t *testing.T) {
	code, stdout, stderr := invokeCLI(t, "version")
	v, commit := record.BuildVersion()
	want := "sagebench " + v + " (commit " + commit + ", " + runtime.Version() + ")\n"
	if code != ExitOK || stdout != want {
		t.Errorf("exit %d stdout %q stderr %q, want %q", code, stdout, stderr, want)
	}
	if strings.Contains(stdout, "%!") {
		t.Errorf("formatting error in %q", stdout)
	}
}
