package micro

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestWriteGoals: the goal lines fail when the numbers are bad, and say
// "not measured" for a shape without results.
func TestWriteGoals(t *testing.T) {
	var in strings.Builder
	line := func(name string, ns, cpu float64, extra string) {
		fmt.Fprintf(&in, "Benchmark%s-2 100 %.0f ns/op %.0f cpu-ns/op %s 0 B/op 0 allocs/op\n", name, ns, cpu, extra)
	}
	for _, ns := range []float64{1, 1.02} { // two repetitions
		// 512×8192: auto (2 workers) 3 % above the best; FedAvg 1.15× the floor.
		line("Aggregate/clients=512/dim=8192/workers=1", 400e3*ns, 400e3, "")
		line("Aggregate/clients=512/dim=8192/workers=2", 300e3*ns, 600e3, "")
		line("Aggregate/clients=512/dim=8192/workers=auto", 309e3*ns, 618e3, "2 workers")
		line("MemoryFloor/bytes=16777216/workers=2", 261e3*ns, 522e3, "")
		// 256×8192: auto picked 1 worker, 1.3× the best; FedAvg 1.4× the floor.
		line("Aggregate/clients=256/dim=8192/workers=1", 130e3*ns, 130e3, "")
		line("Aggregate/clients=256/dim=8192/workers=2", 100e3*ns, 200e3, "")
		line("Aggregate/clients=256/dim=8192/workers=auto", 130e3*ns, 130e3, "1 workers")
		line("MemoryFloor/bytes=8388608/workers=2", 71e3*ns, 142e3, "")
	}
	var out bytes.Buffer
	failed, err := WriteGoals(&out, strings.NewReader(in.String()), "in")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"auto/best clients=512/dim=8192: 1.030 (goal <= 1.05) PASS; auto chose 2, best fixed 2, fixed 2 ÷ best 1.000",
		"auto/best clients=256/dim=8192: 1.300 (goal <= 1.05) FAIL; auto chose 1, best fixed 2, fixed 1 ÷ best 1.300",
		"auto/best clients=32/dim=2048: not measured (goal <= 1.05)",
		"best/floor clients=512/dim=8192: 1.149 wall, 1.149 cpu, 2 workers (goal <= 1.20) PASS",
		"best/floor clients=256/dim=8192: 1.408 wall, 1.408 cpu, 2 workers (goal <= 1.20) FAIL",
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("goals lack %q:\n%s", want, out.String())
		}
	}
	if failed != 10+1+1 { // 10 shapes not measured, one auto and one floor failure
		t.Errorf("%d failed, want 12:\n%s", failed, out.String())
	}
	if _, err := WriteGoals(&out, strings.NewReader("BenchmarkCodec/x 1 1 ns/op\n"), "in"); !errors.Is(err, ErrNoResults) {
		t.Errorf("no aggregate results: %v", err)
	}
}
