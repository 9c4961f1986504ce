package ray_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestDriverOnRealRay runs the driver's RealRayTest (RayRuntime on a
// local Ray started by ray.init: actors, the stage-by-stage submission
// that avoids the head-of-line blocking of Ray's sequential actor queue,
// measured, and a dead actor's transaction keeping its history) with the
// python of the Ray venv; skipped without ray unless SAGEBENCH_REQUIRE_RAY.
func TestDriverOnRealRay(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Ray")
	}
	bin := raytest.NeedRay(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "backends", "ray"))
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "python"), "-m", "unittest", "-v", "test_sagebench_ray.RealRayTest")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "PYTHONDONTWRITEBYTECODE=1", "SAGEBENCH_TEST_REAL_RAY=1", "RAY_USAGE_STATS_ENABLED=0",
		"RAY_AUTH_MODE=disabled") // else ray.init writes ~/.ray/auth_token, and every later `ray start` of the user is secured
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") || strings.Contains(string(out), "skipped") {
		t.Fatalf("RealRayTest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
