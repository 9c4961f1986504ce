package ray_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/ray/raytest"
)

// TestDriverPython runs the Python driver's unit tests (its logic, and
// RayRuntime's through a stand-in for Ray, against an in-process fake
// target) when python3 is installed; .ci/run installs it and sets
// SAGEBENCH_REQUIRE_PYTHON3, which makes its absence a failure.
func TestDriverPython(t *testing.T) {
	py := raytest.Python3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "backends", "ray"))
	cmd := exec.CommandContext(ctx, py, "-W", "error::ResourceWarning", "-m", "unittest", "discover", "-s", dir, "-p", "test_*.py")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
