package raytest

import (
	"os"
	"os/exec"
	"testing"
)

// Python3 is the python3 that runs sagebench's Ray driver in tests. The
// test skips when there is none, unless SAGEBENCH_REQUIRE_PYTHON3 is set
// (as .ci/run sets it): then the absence is a failure.
func Python3(t testing.TB) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("SAGEBENCH_REQUIRE_PYTHON3") != "" {
			t.Fatal("python3 not found, and SAGEBENCH_REQUIRE_PYTHON3 is set: the Ray driver's tests must run")
		}
		t.Skip("python3 not installed: the Ray driver cannot run here")
	}
	return py
}
