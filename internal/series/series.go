package series

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/record"
)

// Config sets the windows. The zero value takes the defaults noted.
type Config struct {
	Width time.Duration `yaml:"width" json:"width"` // default 2s
	Step  time.Duration `yaml:"step" json:"step"`   // default 250ms
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.Width == 0 {
		c.Width = 2 * time.Second
	}
	if c.Step == 0 {
		c.Step = 250 * time.Millisecond
	}
	return c
}

// Validate reports an unusable window, naming the key under prefix.
func (c Config) Validate(prefix string) error {
	c = c.WithDefaults()
	switch {
	case c.Width < 10*time.Millisecond || c.Width > time.Hour:
		return fmt.Errorf("%s.width %v: must be in [10ms, 1h]", prefix, c.Width)
	case c.Step < time.Millisecond || c.Step > c.Width:
		return fmt.Errorf("%s.step %v: must be in [1ms, width]", prefix, c.Step)
	}
	return nil
}

// Window is one window of the series. Latencies are in ms.
//
// The plain quantiles (TTFTP50 … E2EP99) follow the one failure rule: a
// failed request counts as +∞ (it never answered, so it is slower than
// any that did), by the one quantile definition (package quantile:
// nearest rank). A quantile is +Inf when failures reach its rank — a
// window where everything failed has every quantile +Inf — and NaN only
// when the window holds no request to measure (for TTFT: none that
// streams, see ttftSample). The successes' own quantiles, failures left
// out, are beside them under names that say so (…OK).
//
// A Window is not a record: windows.jsonl writes its quantiles as Ms.
type Window struct {
	StartNS    int64   `json:"start_ns"` // offset from the run's start
	EndNS      int64   `json:"end_ns"`
	Count      int     `json:"count"`
	OK         int     `json:"ok"`
	Errors     int     `json:"errors"`
	SLOMet     int     `json:"slo_met"`
	Throughput float64 `json:"throughput"` // ok per second
	Goodput    float64 `json:"goodput"`    // SLO met per second
	ErrorRate  float64 `json:"error_rate"` // errors ÷ count
	TTFTP50    float64 `json:"-"`
	TTFTP99    float64 `json:"-"`
	E2EP50     float64 `json:"-"`
	E2EP99     float64 `json:"-"`
	// The successes only (NaN: none succeeded).
	TTFTP50OK float64 `json:"-"`
	TTFTP99OK float64 `json:"-"`
	E2EP50OK  float64 `json:"-"`
	E2EP99OK  float64 `json:"-"`
}

// maxWindows bounds a series (a 10-hour soak at a 250 ms step is 144,000).
const maxWindows = 1 << 20

// Compute builds the windows over reqs (the caller picks which kinds
// count, e.g. requests but not transaction stages).
func Compute(reqs []record.Request, cfg Config) ([]Window, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate("series"); err != nil {
		return nil, err
	}
	var last int64
	for i := range reqs {
		last = max(last, reqs[i].IntendedNS)
	}
	n := int(last/int64(cfg.Step)) + 1
	if n > maxWindows {
		return nil, errors.New("series: too many windows; raise step")
	}
	sorted := slices.Clone(reqs)
	slices.SortFunc(sorted, func(a, b record.Request) int { return compare(a.IntendedNS, b.IntendedNS) })
	out := make([]Window, 0, n)
	lo := 0
	for k := range n {
		w := Window{StartNS: int64(k) * int64(cfg.Step)}
		w.EndNS = w.StartNS + int64(cfg.Width)
		for lo < len(sorted) && sorted[lo].IntendedNS < w.StartNS {
			lo++
		}
		hi := lo
		for hi < len(sorted) && sorted[hi].IntendedNS < w.EndNS {
			hi++
		}
		fill(&w, sorted[lo:hi], cfg.Width)
		out = append(out, w)
	}
	return out, nil
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func fill(w *Window, reqs []record.Request, width time.Duration) {
	var ttft, e2e []float64 // every request's, failures +Inf
	var ttftOK, e2eOK []float64
	for i := range reqs {
		r := &reqs[i]
		w.Count++
		if !r.OK {
			w.Errors++
			e2e = append(e2e, math.Inf(1))
			if streams(r) {
				ttft = append(ttft, math.Inf(1))
			}
			continue
		}
		w.OK++
		if r.SLOMet {
			w.SLOMet++
		}
		e2e, e2eOK = append(e2e, r.E2EMs), append(e2eOK, r.E2EMs)
		if r.FirstToken > 0 {
			ttft, ttftOK = append(ttft, r.TTFTMs), append(ttftOK, r.TTFTMs)
		}
	}
	sec := width.Seconds()
	w.Throughput, w.Goodput = float64(w.OK)/sec, float64(w.SLOMet)/sec
	if w.Count > 0 {
		w.ErrorRate = float64(w.Errors) / float64(w.Count)
	}
	slices.Sort(ttft)
	slices.Sort(e2e)
	slices.Sort(ttftOK)
	slices.Sort(e2eOK)
	w.TTFTP50, w.TTFTP99 = quantile.OfSorted(ttft, 0.50), quantile.OfSorted(ttft, 0.99)
	w.E2EP50, w.E2EP99 = quantile.OfSorted(e2e, 0.50), quantile.OfSorted(e2e, 0.99)
	w.TTFTP50OK, w.TTFTP99OK = quantile.OfSorted(ttftOK, 0.50), quantile.OfSorted(ttftOK, 0.99)
	w.E2EP50OK, w.E2EP99OK = quantile.OfSorted(e2eOK, 0.50), quantile.OfSorted(e2eOK, 0.99)
}

// streams reports whether request r waits for a first token, so that
// failing it counts +∞ in the window's TTFT: every type but an embedding
// or a retrieval, which never stream one (their successes have no TTFT
// either).
func streams(r *record.Request) bool {
	return protocol.Streams(r.Type)
}

// Percentile is the p-th percentile of xs by the one quantile
// definition (package quantile: nearest rank; NaN when empty); xs is
// not modified.
func Percentile(xs []float64, p float64) float64 { return quantile.Of(xs, p/100) }
