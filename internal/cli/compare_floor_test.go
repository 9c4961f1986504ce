package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// floorRunDir writes a calibrated run directory whose bench.txt has six
// samples of p99-ms around p99.
func floorRunDir(t *testing.T, dir, id string, p99, floor float64) string {
	t.Helper()
	return floorRunDirFailed(t, dir, id, p99, floor, 0)
}

// floorRunDirFailed is floorRunDir with failed requests against the
// exact server.
func floorRunDirFailed(t *testing.T, dir, id string, p99, floor float64, failed int) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := fmt.Sprintf(`{"run_id":%q,"workload":"Q2","name":"ControlMix","backend":"sage","valid":true,"complete":true,"invalid_reasons":[],
		"measurement_floor":{"ttft":{"count":100,"p99_ms":%v},"e2e":{"count":100,"p99_ms":%v},"failed":%d}}`, id, floor, floor, failed)
	var bench strings.Builder
	for i := range 6 {
		fmt.Fprintf(&bench, "BenchmarkQ2ControlMix/backend=sage/policy=fifo 100 1000 ns/op %v p99-ms\n", p99+float64(i)*0.001)
	}
	for name, data := range map[string]string{"run.json": run, "bench.txt": bench.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCompareMarksChangesWithinTheFloor: a p99 that moved by 0.3 ms
// between two runs whose harness error reaches 0.5 ms is marked as within
// the floor; one that moved by 2 ms is not.
func TestCompareMarksChangesWithinTheFloor(t *testing.T) {
	root := t.TempDir()
	base := floorRunDir(t, filepath.Join(root, "base"), "q2-a", 10, 0.5)
	near := floorRunDir(t, filepath.Join(root, "near"), "q2-b", 10.3, 0.5)
	far := floorRunDir(t, filepath.Join(root, "far"), "q2-c", 12, 0.5)
	for _, tc := range []struct {
		name   string
		cur    string
		within bool
	}{{"within", near, true}, {"beyond", far, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := Main(context.Background(), []string{"compare", base, tc.cur}, &out, &errb)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !strings.Contains(out.String(), "measurement floor: 0.500 ms") {
				t.Errorf("no floor line:\n%s", out.String())
			}
			if got := strings.Contains(out.String(), "within floor: "); got != tc.within {
				t.Errorf("within-floor mark %v, want %v:\n%s", got, tc.within, out.String())
			}
		})
	}
}

// TestCompareFloorUnknownWithFailures: a calibrated run with requests
// that failed against the exact server (+∞ at the floor's p99) has no
// known floor, so no change is marked within it — the successes' p99 is
// not the floor.
func TestCompareFloorUnknownWithFailures(t *testing.T) {
	root := t.TempDir()
	base := floorRunDirFailed(t, filepath.Join(root, "base"), "q2-a", 10, 0.5, 2)
	near := floorRunDir(t, filepath.Join(root, "near"), "q2-b", 10.3, 0.5)
	var out, errb strings.Builder
	if code := Main(context.Background(), []string{"compare", base, near}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "measurement floor: unknown: requests failed against the exact server in 1 calibrated run(s)") || strings.Contains(out.String(), "within floor: ") {
		t.Errorf("want the floor unknown and nothing within it:\n%s", out.String())
	}
}
