package capture

import (
	"math"
	"testing"
	"time"
)

func TestHistogramQuantile(t *testing.T) {
	inf := math.Inf(1)
	bs := []Bucket{{0.1, 50}, {0.5, 90}, {1, 99}, {inf, 100}}
	tests := []struct {
		name string
		q    float64
		bs   []Bucket
		want float64
	}{
		{"median in first bucket from 0", 0.5, bs, 0.1},
		{"p25 interpolated", 0.25, bs, 0.05},
		{"p90 at bucket edge", 0.9, bs, 0.5},
		{"p95 inside", 0.95, bs, 0.5 + 0.5*5/9},
		{"p999 in +Inf gives highest finite bound", 0.999, bs, 1},
		{"negative first bound", 0.1, []Bucket{{-1, 10}, {inf, 10}}, -1},
		{"no observations", 0.5, []Bucket{{1, 0}, {inf, 0}}, math.NaN()},
		{"q out of range", 1.5, bs, math.NaN()},
		{"no +Inf bucket", 0.5, []Bucket{{1, 3}, {2, 4}}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HistogramQuantile(tt.q, tt.bs)
			if math.IsNaN(tt.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tt.want) > 1e-9) {
				t.Errorf("HistogramQuantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func pts(vals ...float64) []point {
	t0 := time.Unix(0, 0)
	out := make([]point, len(vals))
	for i, v := range vals {
		out[i] = point{at: t0.Add(time.Duration(i) * time.Second), s: Series{Name: "c", Type: TypeCounter, Value: v}}
	}
	return out
}

func TestCounterDelta(t *testing.T) {
	tests := []struct {
		name   string
		vals   []float64
		delta  float64
		resets int
	}{
		{"monotone", []float64{1, 5, 9}, 8, 0},
		{"reset in the middle", []float64{10, 15, 3, 7}, 5 + 3 + 4, 1},
		{"reset to zero at end", []float64{10, 0}, 0, 1},
		{"flat", []float64{4, 4}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := seriesWindow(pts(tt.vals...))
			if w.delta != tt.delta || w.resets != tt.resets {
				t.Errorf("delta %v resets %d, want %v and %d", w.delta, w.resets, tt.delta, tt.resets)
			}
			if want := float64(len(tt.vals) - 1); w.seconds != want {
				t.Errorf("seconds %v, want %v", w.seconds, want)
			}
		})
	}
}

func TestBucketDeltasAcrossReset(t *testing.T) {
	inf := math.Inf(1)
	mk := func(a, b float64) point {
		return point{s: Series{Type: TypeHistogram, Count: b, Buckets: []Bucket{{1, a}, {inf, b}}}}
	}
	got := bucketDeltas([]point{mk(5, 10), mk(8, 14), mk(1, 2)}) // reset before the last
	if got[0].Count != 3+1 || got[1].Count != 4+2 {
		t.Errorf("bucket deltas %+v, want 4 and 6", got)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{4, 1, 3, 2, math.NaN(), math.Inf(1)})
	if s.N != 4 || s.Mean != 2.5 || s.Median != 2 || s.Min != 1 || s.Max != 4 || s.P95 != 4 {
		t.Errorf("Summarize = %+v", s)
	}
	if (Summarize(nil) != Stats{}) {
		t.Error("Summarize(nil) is not the zero Stats")
	}
}
