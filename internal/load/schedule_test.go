package load

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

var sampleConfigs = map[string]ScheduleConfig{
	"poisson":      {Process: ProcessPoisson, Rate: 200, Duration: 5 * time.Second},
	"constant":     {Process: ProcessConstant, Rate: 50, Count: 100},
	"gamma":        {Process: ProcessGamma, Rate: 200, Burstiness: 4, Count: 1000},
	"gamma-smooth": {Process: ProcessGamma, Rate: 200, Burstiness: 0.25, Count: 1000},
	"onoff":        {Process: ProcessOnOff, Rate: 10, BurstRate: 500, BurstLength: 200 * time.Millisecond, BurstPeriod: time.Second, Duration: 5 * time.Second},
	"ramp":         {Process: ProcessRamp, Rate: 10, RampTo: 400, Duration: 5 * time.Second},
	"ramp-uniform": {Process: ProcessRamp, Rate: 10, RampTo: 400, Duration: 5 * time.Second, Spacing: SpacingUniform},
}

func hashOffsets(s Schedule) string {
	h := sha256.New()
	var b [8]byte
	for _, o := range s.Offsets {
		binary.LittleEndian.PutUint64(b[:], uint64(o))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestScheduleGoldenHashes pins the schedules of fixed configs and seeds:
// a different build (Go release, machine) must produce the same bytes.
func TestScheduleGoldenHashes(t *testing.T) {
	names := make([]string, 0, len(sampleConfigs))
	for n := range sampleConfigs {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, n := range names {
		s, err := NewSchedule(sampleConfigs[n], 42)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		sb.WriteString(n + " " + hashOffsets(s) + "\n")
	}
	golden := filepath.Join("testdata", "schedule_hashes.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if sb.String() != string(want) {
		t.Errorf("schedule hashes changed:\n got %s\nwant %s", sb.String(), want)
	}
}

func TestScheduleSeeds(t *testing.T) {
	for name, cfg := range sampleConfigs {
		t.Run(name, func(t *testing.T) {
			a, _ := NewSchedule(cfg, 7)
			b, _ := NewSchedule(cfg, 7)
			c, _ := NewSchedule(cfg, 8)
			if hashOffsets(a) != hashOffsets(b) {
				t.Error("same seed gave different schedules")
			}
			seedless := cfg.Process == ProcessConstant || cfg.Spacing == SpacingUniform
			if (hashOffsets(a) == hashOffsets(c)) != seedless {
				t.Errorf("different seeds: equal=%v, want %v", hashOffsets(a) == hashOffsets(c), seedless)
			}
			if !sort.SliceIsSorted(a.Offsets, func(i, j int) bool { return a.Offsets[i] < a.Offsets[j] }) {
				t.Error("offsets not sorted")
			}
		})
	}
}

func mustSchedule(t *testing.T, cfg ScheduleConfig) Schedule {
	t.Helper()
	s, err := NewSchedule(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func countIn(s Schedule, from, to time.Duration) int {
	n := 0
	for _, o := range s.Offsets {
		if o >= from && o < to {
			n++
		}
	}
	return n
}

// within reports whether got is within rel of want.
func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*want }

func TestScheduleShapes(t *testing.T) {
	t.Run("poisson rate and cv", func(t *testing.T) {
		s := mustSchedule(t, ScheduleConfig{Process: ProcessPoisson, Rate: 1000, Duration: 20 * time.Second})
		if !within(float64(s.Len()), 20000, 0.03) || s.Span() != 20*time.Second {
			t.Errorf("len %d span %v", s.Len(), s.Span())
		}
		if cv2 := gapCV2(s); !within(cv2, 1, 0.1) {
			t.Errorf("cv² = %.3f, want ≈1", cv2)
		}
	})
	t.Run("constant is exact", func(t *testing.T) {
		s := mustSchedule(t, ScheduleConfig{Process: ProcessConstant, Rate: 4, Count: 5})
		want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second}
		for i := range want {
			if s.Offsets[i] != want[i] {
				t.Fatalf("offsets %v, want %v", s.Offsets, want)
			}
		}
		if s.Rate() != 4 {
			t.Errorf("rate %v", s.Rate())
		}
	})
	for _, b := range []float64{0.25, 4, 16} {
		t.Run("gamma burstiness", func(t *testing.T) {
			s := mustSchedule(t, ScheduleConfig{Process: ProcessGamma, Rate: 100, Burstiness: b, Count: 40000})
			if cv2 := gapCV2(s); !within(cv2, b, 0.15) {
				t.Errorf("burstiness %v: cv² = %.3f", b, cv2)
			}
			if !within(s.Rate(), 100, 0.05) {
				t.Errorf("burstiness %v: rate %.1f", b, s.Rate())
			}
		})
	}
	t.Run("onoff", func(t *testing.T) {
		s := mustSchedule(t, ScheduleConfig{Process: ProcessOnOff, Rate: 100, BurstRate: 1000, BurstLength: time.Second, BurstPeriod: 4 * time.Second, Duration: 40 * time.Second})
		on, off := 0, 0
		for k := range 10 {
			p := time.Duration(k) * 4 * time.Second
			on += countIn(s, p, p+time.Second)
			off += countIn(s, p+time.Second, p+4*time.Second)
		}
		if !within(float64(on), 10000, 0.05) || !within(float64(off), 3000, 0.08) {
			t.Errorf("on %d (want ≈10000), off %d (want ≈3000)", on, off)
		}
	})
	t.Run("ramp", func(t *testing.T) {
		s := mustSchedule(t, ScheduleConfig{Process: ProcessRamp, Rate: 0, RampTo: 2000, Duration: 10 * time.Second})
		first, second := countIn(s, 0, 5*time.Second), countIn(s, 5*time.Second, 10*time.Second)
		if !within(float64(first), 2500, 0.06) || !within(float64(second), 7500, 0.04) {
			t.Errorf("first half %d (want ≈2500), second %d (want ≈7500)", first, second)
		}
	})
	t.Run("ramp uniform is exact", func(t *testing.T) {
		s := mustSchedule(t, ScheduleConfig{Process: ProcessRamp, Rate: 100, RampTo: 100, Duration: time.Second, Spacing: SpacingUniform})
		if s.Len() != 100 || s.Offsets[1] != 10*time.Millisecond || s.Offsets[99] != 990*time.Millisecond {
			t.Errorf("len %d, offsets[1] %v, [99] %v", s.Len(), s.Offsets[1], s.Offsets[99])
		}
	})
	t.Run("count caps duration", func(t *testing.T) {
		s := mustSchedule(t, ScheduleConfig{Process: ProcessPoisson, Rate: 1000, Duration: 10 * time.Second, Count: 50})
		if s.Len() != 50 {
			t.Errorf("len %d", s.Len())
		}
	})
	t.Run("ramp down to zero ends", func(t *testing.T) {
		s := mustSchedule(t, ScheduleConfig{Process: ProcessRamp, Rate: 1000, RampTo: 0, Duration: 2 * time.Second})
		if !within(float64(s.Len()), 1000, 0.08) || s.Offsets[s.Len()-1] >= 2*time.Second {
			t.Errorf("len %d last %v", s.Len(), s.Offsets[s.Len()-1])
		}
	})
}

// gapCV2 is the squared coefficient of variation of the gaps.
func gapCV2(s Schedule) float64 {
	var sum, sq float64
	n := float64(s.Len() - 1)
	for i := 1; i < s.Len(); i++ {
		g := float64(s.Offsets[i] - s.Offsets[i-1])
		sum += g
		sq += g * g
	}
	mean := sum / n
	return (sq/n - mean*mean) / (mean * mean)
}

func TestScheduleValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  ScheduleConfig
		want string // substring; "" = valid
	}{
		{"ok", ScheduleConfig{Process: "poisson", Rate: 1, Count: 1}, ""},
		{"no process", ScheduleConfig{Rate: 1, Count: 1}, "schedule.process is missing"},
		{"unknown process", ScheduleConfig{Process: "zipf", Rate: 1, Count: 1}, `schedule.process "zipf" is unknown`},
		{"no rate", ScheduleConfig{Process: "poisson", Count: 1}, "schedule.rate must be > 0 for process poisson"},
		{"no length", ScheduleConfig{Process: "constant", Rate: 1}, "set schedule.count or schedule.duration"},
		{"negative count", ScheduleConfig{Process: "constant", Rate: 1, Count: -1}, "schedule.count must be >= 0"},
		{"nan rate", ScheduleConfig{Process: "poisson", Rate: math.NaN(), Count: 1}, "schedule.rate must be a finite number"},
		{"gamma without burstiness", ScheduleConfig{Process: "gamma", Rate: 1, Count: 1}, "schedule.burstiness must be > 0"},
		{"onoff without period", ScheduleConfig{Process: "onoff", BurstRate: 1, Count: 1}, "schedule.burst_period must be > 0"},
		{"onoff burst longer than period", ScheduleConfig{Process: "onoff", BurstRate: 1, BurstPeriod: 1, BurstLength: 2, Count: 1}, "schedule.burst_length"},
		{"onoff without burst rate", ScheduleConfig{Process: "onoff", BurstPeriod: 2, BurstLength: 1, Count: 1}, "schedule.burst_rate must be > 0"},
		{"ramp without duration", ScheduleConfig{Process: "ramp", Rate: 1, RampTo: 2, Count: 10}, "schedule.duration must be > 0 for process ramp"},
		{"ramp all zero", ScheduleConfig{Process: "ramp", Duration: 1}, "schedule.rate or schedule.ramp_to"},
		{"trace without file", ScheduleConfig{Process: "trace", Count: 1}, "schedule.trace_file"},
		{"trace with rate", ScheduleConfig{Process: "trace", TraceFile: "x", Rate: 3, Count: 1}, "schedule.rate is not used by process trace"},
		{"bad spacing", ScheduleConfig{Process: "ramp", Rate: 1, Duration: 1, Spacing: "even"}, "schedule.spacing"},
		{"too many", ScheduleConfig{Process: "poisson", Rate: 1e6, Duration: time.Hour}, "exceeds the limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
			if _, err2 := NewSchedule(tc.cfg, 1); tc.want != "" && err2 == nil {
				t.Error("NewSchedule accepted an invalid config")
			}
		})
	}
}

// TestNewScheduleRejectsRunaway covers configs that pass the field checks
// but whose arrivals would overflow a Duration or never advance in time
// (gamma gaps underflowing to zero filled memory until the process died).
func TestNewScheduleRejectsRunaway(t *testing.T) {
	tests := []struct {
		name string
		cfg  ScheduleConfig
		want string
	}{
		{"gamma burstiness beyond the limit", ScheduleConfig{Process: "gamma", Rate: 100, Burstiness: 1e12, Duration: 10 * time.Second}, "schedule.burstiness"},
		{"poisson rate too low for count", ScheduleConfig{Process: "poisson", Rate: 1e-12, Count: 3}, "beyond"},
		{"constant rate too low for count", ScheduleConfig{Process: "constant", Rate: 1e-12, Count: 3}, "beyond"},
		{"onoff rates too low for count", ScheduleConfig{Process: "onoff", BurstRate: 1e-12, BurstPeriod: time.Second, BurstLength: time.Second, Count: 3}, "beyond"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSchedule(tc.cfg, 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewSchedule() = %d arrivals (last %v), %v; want an error containing %q", s.Len(), s.Span(), err, tc.want)
			}
		})
	}
}
