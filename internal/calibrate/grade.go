package calibrate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/sagebench/sagebench/internal/record"
)

// Metric is one per-request figure a tool reports and the grader checks.
type Metric int

// The graded metrics: times in ms, output tokens in tokens.
const (
	TTFT Metric = iota
	ITL         // per request: mean gap between content tokens (what every tool calls ITL or TPOT)
	E2E
	OutputTokens
	nMetrics
)

var metricNames = [nMetrics]string{"TTFT", "ITL", "E2E", "output tokens"}

func (m Metric) String() string { return metricNames[m] }

// Sample is one successful request of a tool's export: the metrics it
// reported (Has says which; a metric a tool does not report is absent,
// not zero).
type Sample struct {
	V   [nMetrics]float64
	Has [nMetrics]bool
}

func (s *Sample) set(m Metric, v float64) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		s.V[m], s.Has[m] = v, true
	}
}

// Export is what the grader reads from a tool's native export: its
// successful requests, its failures, and its own summary figures.
type Export struct {
	Tool     string
	Requests []Sample
	Failed   int
	// Own are the tool's own reported medians (OwnHas says which it
	// reports); the grader must reproduce them from Requests.
	Own    [nMetrics]float64
	OwnHas [nMetrics]bool
	// Quantile is the tool's own quantile definition, used to reproduce
	// its medians (nil: numpy's linear interpolation).
	Quantile func(sorted []float64, q float64) float64
	// Lag is the tool's own schedule-lag figure in its words, if it has one.
	Lag   string
	Notes []string
}

func (e *Export) own(m Metric, v float64) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		e.Own[m], e.OwnHas[m] = v, true
	}
}

// ReproduceTolerance is how close (ms or tokens) the grader's median of a
// tool's per-request values must be to the tool's own reported median
// for the export to count as read right — or ReproduceRelative of the
// median when that is more: a summary kept in an HDR histogram (3
// significant digits) cannot be closer than 0.1 % for a 200 ms E2E.
const (
	ReproduceTolerance = 0.1
	ReproduceRelative  = 0.001
)

// MetricGrade is one metric of a tool against the truth. The errors are
// of the distribution — the tool's quantile minus the truth log's same
// quantile — so a perfect tool scores 0 even when the server itself ran
// late on a loaded machine (the truth log holds what it really did).
type MetricGrade struct {
	Metric     string  `json:"metric"`
	N          int     `json:"n"`
	Median     float64 `json:"median"`               // of the export's per-request values
	P99        float64 `json:"p99"`                  // of the export's per-request values
	Own        float64 `json:"own_median,omitempty"` // the tool's own summary median
	OwnKnown   bool    `json:"own_known"`            // the export has its own median
	Reproduced bool    `json:"reproduced"`           // |Median − Own| ≤ max(ReproduceTolerance, ReproduceRelative·Own)
	True       float64 `json:"true_median"`          // the truth log's median
	TrueP99    float64 `json:"true_p99"`             // the truth log's p99
	ErrMedian  float64 `json:"error_median"`         // Median − True
	ErrP99     float64 `json:"error_p99"`            // P99 − TrueP99
}

// Grade is a tool's export graded against a ground-truth log.
type Grade struct {
	Tool          string            `json:"tool"`
	TruthRequests int               `json:"truth_requests"` // answered by the server
	Reported      int               `json:"reported"`       // successful in the export
	Failed        int               `json:"failed"`         // failed in the export
	Lost          int               `json:"lost"`           // answered but not in the export
	Extra         int               `json:"extra"`          // in the export beyond what was answered (double-counted)
	ServerLateTTF record.ErrorStats `json:"server_late_ttft"`
	Metrics       []MetricGrade     `json:"metrics"`
	Lag           string            `json:"lag,omitempty"`
	Notes         []string          `json:"notes,omitempty"`
}

// GradeExport grades e against the truth log: per metric, the tool's
// median and p99 minus the log's, the tool's own median reproduced from
// its per-request values, and the request count against what the server
// answered.
func GradeExport(e Export, truth []Truth) Grade {
	g := Grade{Tool: e.Tool, TruthRequests: len(truth), Reported: len(e.Requests), Failed: e.Failed, Lag: e.Lag, Notes: e.Notes}
	if d := g.TruthRequests - g.Reported - g.Failed; d > 0 {
		g.Lost = d
	}
	if d := g.Reported - g.TruthRequests; d > 0 {
		g.Extra = d
	}
	trueVals := truthValues(truth)
	var late errs
	for _, t := range truth {
		if t.Stream {
			late.add(t.TTFTMs, t.DueTTFTMs)
		}
	}
	g.ServerLateTTF = late.stats()
	for m := range nMetrics {
		if mg, ok := gradeMetric(e, m, trueVals[m]); ok {
			g.Metrics = append(g.Metrics, mg)
		}
	}
	return g
}

func gradeMetric(e Export, m Metric, truth []float64) (MetricGrade, bool) {
	var vals []float64
	for _, s := range e.Requests {
		if s.Has[m] {
			vals = append(vals, s.V[m])
		}
	}
	if len(vals) == 0 && !e.OwnHas[m] {
		return MetricGrade{}, false
	}
	mg := MetricGrade{Metric: m.String(), N: len(vals), Own: e.Own[m], OwnKnown: e.OwnHas[m]}
	slices.Sort(vals)
	quantile := e.Quantile
	if quantile == nil {
		quantile = Quantile
	}
	mg.Median, mg.P99 = quantile(vals, 0.5), quantile(vals, 0.99)
	if mg.OwnKnown && len(vals) > 0 {
		tol := max(ReproduceTolerance, ReproduceRelative*math.Abs(mg.Own))
		mg.Reproduced = math.Abs(mg.Median-mg.Own) <= tol
	}
	if len(truth) > 0 && len(vals) > 0 {
		slices.Sort(truth)
		mg.True, mg.TrueP99 = quantile(truth, 0.5), quantile(truth, 0.99)
		mg.ErrMedian, mg.ErrP99 = mg.Median-mg.True, mg.P99-mg.TrueP99
	}
	return mg, true
}

// truthValues are the log's true per-request values of each metric.
func truthValues(truth []Truth) [nMetrics][]float64 {
	var out [nMetrics][]float64
	for _, t := range truth {
		if !t.Stream {
			out[E2E] = append(out[E2E], t.E2EMs)
			out[OutputTokens] = append(out[OutputTokens], float64(t.Tokens))
			continue
		}
		out[TTFT] = append(out[TTFT], t.TTFTMs)
		out[E2E] = append(out[E2E], t.E2EMs)
		out[OutputTokens] = append(out[OutputTokens], float64(t.Tokens))
		if n := len(t.TokenMs); n > 1 {
			out[ITL] = append(out[ITL], (t.TokenMs[n-1]-t.TokenMs[0])/float64(n-1))
		}
	}
	return out
}

// Quantile is the linearly interpolated q-quantile of sorted values (the
// numpy default every Python tool uses); 0 for none.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

// CDFQuantile is GuideLLM's definition: equal values merged, each
// distinct value weighted by its share of the samples, the cumulative
// sum of those shares taken in float64 as numpy's cumsum does, and the
// q-quantile the first value whose cumulative share reaches q (numpy's
// searchsorted, side left) — so the float rounding of the sum decides
// between the two middle samples exactly as it does in GuideLLM; 0 for
// none.
func CDFQuantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	n := float64(len(sorted))
	cdf := 0.0
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		cdf += float64(j-i) / n
		if cdf >= q {
			return sorted[i]
		}
		i = j
	}
	return sorted[len(sorted)-1]
}

// MaxTruthLine bounds one line of a truth log (a 16,384-token stream's
// write times fit well within it).
const MaxTruthLine = 1 << 20

// ReadTruth reads a ground-truth log written by the conformance server.
func ReadTruth(r io.Reader) ([]Truth, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxTruthLine)
	var out []Truth
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var t Truth
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("truth log line %d: %w", line, err)
		}
		if t.Tokens < 0 || len(t.TokenMs) > t.Tokens {
			return nil, fmt.Errorf("truth log line %d: %d tokens with %d write times", line, t.Tokens, len(t.TokenMs))
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("truth log: %w", err)
	}
	return out, nil
}
