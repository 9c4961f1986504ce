package reqset_test

import (
	"math"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
)

func TestQuantile(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{"median of odd", []float64{3, 1, 2}, 0.5, 2},
		{"p99 of 100 is the 99th", seq(100), 0.99, 99},
		{"p99 of 10 is the max", seq(10), 0.99, 10},
		{"p0 is the min", []float64{5, 4}, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reqset.Quantile(tc.xs, tc.q); got != tc.want {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tc.xs, tc.q, got, tc.want)
			}
		})
	}
	if !math.IsNaN(reqset.Quantile(nil, 0.5)) {
		t.Error("quantile of nothing should be NaN")
	}
}

func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

func TestMeasure(t *testing.T) {
	q := 5.0
	rs := []record.Request{
		{OK: true, SLOMet: true, E2EMs: 10, TTFTMs: 2, FirstToken: 1, QueueMs: &q},
		{OK: true, E2EMs: 30, TTFTMs: 4, FirstToken: 1},
		{OK: false, E2EMs: 1000},
	}
	s := reqset.Measure(rs)
	if s.N != 3 || s.OK != 2 || s.Met != 1 || s.E2EMean != 20 || s.TTFTP99 != 4 || s.QueueP99 != 5 {
		t.Errorf("Measure = %+v", s)
	}
	if got := s.Goodput(2 * time.Second); got != 0.5 {
		t.Errorf("Goodput = %v, want 0.5", got)
	}
}

func TestBusy(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	at := func(d time.Duration) int64 { return int64(d) }
	rs := []record.Request{
		{SentNS: 1, QueueMs: ms(2000)},                    // queued [0,2): offsets start at 1 ns
		{SentNS: at(1 * time.Second), QueueMs: ms(2000)},  // queued [1,3)
		{SentNS: at(5 * time.Second), QueueMs: ms(0)},     // never queued
		{SentNS: at(12 * time.Second), QueueMs: ms(1000)}, // outside the window
		{SentNS: at(6 * time.Second)},                     // no header
	}
	o := reqset.Busy(rs, 0, 10*time.Second)
	if math.Abs(o.Busy-0.3) > 1e-6 || math.Abs(o.MeanDepth-0.4) > 1e-6 || o.MaxDepth != 2 {
		t.Errorf("Busy = %+v, want busy 0.3, mean depth 0.4, max 2", o)
	}
	if o := reqset.Busy(nil, 0, time.Second); o != (reqset.Occupancy{}) {
		t.Errorf("no records: %+v", o)
	}
}

func TestDepth(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	rs := []record.Request{{SentNS: 1, QueueMs: ms(2000)}, {SentNS: int64(time.Second), QueueMs: ms(2000)}}
	got := reqset.Depth(rs, 0, 4*time.Second, time.Second)
	want := []float64{1, 2, 1, 0}
	for i := range want {
		if i >= len(got) || math.Abs(got[i]-want[i]) > 1e-6 {
			t.Fatalf("Depth = %v, want %v", got, want)
		}
	}
	if reqset.Depth(rs, 0, time.Second, 0) != nil {
		t.Error("zero step must give nothing")
	}
}

// TestSetGrow: after Grow(n), n records are added without a new array,
// and All returns every record in order.
func TestSetGrow(t *testing.T) {
	var s reqset.Set
	s.Add(record.Request{Seq: -1})
	s.Grow(100)
	seq := 0
	if allocs := testing.AllocsPerRun(1, func() {
		for range 50 {
			s.Add(record.Request{Seq: seq})
			seq++
		}
	}); allocs != 0 {
		t.Errorf("%v allocations adding within the grown capacity, want 0", allocs)
	}
	all := s.All()
	if len(all) != 101 || all[0].Seq != -1 || all[100].Seq != 99 {
		t.Errorf("All: %d records, first %d, last %d", len(all), all[0].Seq, all[len(all)-1].Seq)
	}
}

// TestSetView: a view is the records so far, and Adds after it (even
// within the grown capacity) leave it as it was.
func TestSetView(t *testing.T) {
	var s reqset.Set
	s.Grow(10)
	s.Add(record.Request{Seq: 1})
	v := s.View()
	s.Add(record.Request{Seq: 2})
	if len(v) != 1 || v[0].Seq != 1 {
		t.Fatalf("view %v", v)
	}
	w := append(v, record.Request{Seq: 9}) // a careless append copies, never overwrites the set
	if all := s.All(); len(all) != 2 || all[1].Seq != 2 || w[1].Seq != 9 {
		t.Errorf("set %v after appending %v to a view", all, w)
	}
}
