package ray_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestDriverPython runs the Python driver's unit tests (its non-Ray
// logic against an in-process fake target) when python3 is installed.
func TestDriverPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the driver's tests need it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "backends", "ray"))
	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-s", dir, "-p", "test_*.py")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
