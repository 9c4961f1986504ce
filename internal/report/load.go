package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sagebench/sagebench/internal/answer"
	"github.com/sagebench/sagebench/internal/capture"
	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/record"
)

// maxProblems bounds the problems listed per run.
const maxProblems = 30

// Sample is what the report keeps of one request: enough to draw, small
// enough to hold a long run.
type Sample struct {
	E2EMs  float64
	TTFTMs float64   // 0: not streamed
	ITLMs  []float32 // gaps between streamed tokens (at most maxITL per request)
	EndS   float64   // seconds since the run started
	DueS   float64   // intended send, seconds since the run started
	OK     bool
	Labels Labels
}

// maxITL bounds the inter-token gaps kept per request (evenly spaced).
const maxITL = 16

// Labels are the request labels a latency CDF can split by.
type Labels struct {
	Type, Tenant, Priority, Phase string
}

// dimensions are the label names in the order the report splits by.
var dimensions = []string{"phase", "tenant", "priority", "type"}

// Get returns the label named dim ("" when unset or unknown).
func (l Labels) Get(dim string) string {
	switch dim {
	case "type":
		return l.Type
	case "tenant":
		return l.Tenant
	case "priority":
		return l.Priority
	case "phase":
		return l.Phase
	}
	return ""
}

// Run is one loaded run directory.
type Run struct {
	Dir      string
	Record   *record.Run // never nil: a stand-in when run.json is unreadable
	Samples  []Sample
	Metrics  *capture.Timeline // nil without metrics.jsonl
	Events   []Event           // drill events (events.jsonl), if any
	Windows  []answer.Window   // a drill's windowed series (windows.jsonl), if any
	Problems []string

	// Derived once at Load for the figures that each read them.
	events []answer.Event    // the answer's events (answerEvents)
	phases []chart.PhaseSpan // the phases in order due (phaseSpans)
}

// Label names the run in legends: its run id, or the directory.
func (r *Run) Label() string {
	if r.Record.RunID != "" {
		return r.Record.RunID
	}
	return filepath.Base(r.Dir)
}

// Valid reports whether the run is complete and valid with nothing unreadable.
func (r *Run) Valid() bool {
	return r.Record.Valid && r.Record.Complete && len(r.Problems) == 0
}

// Load reads a run directory. It never refuses one: whatever is missing or
// unreadable becomes a problem shown in the banner.
func Load(dir string) *Run {
	r := &Run{Dir: dir}
	rec, err := record.ReadRun(filepath.Join(dir, "run.json"))
	if err != nil {
		r.problem("run.json: %v", err)
		rec = &record.Run{RunID: filepath.Base(dir), InvalidReasons: []string{"run.json is missing or unreadable"}}
	}
	r.Record = rec
	r.loadRequests(filepath.Join(dir, "requests.jsonl"))
	r.loadMetrics(filepath.Join(dir, capture.MetricsFile))
	r.loadEvents(filepath.Join(dir, EventsFile))
	r.loadWindows(filepath.Join(dir, WindowsFile))
	r.events, r.phases = r.answerEvents(), phaseSpans(r.Samples)
	return r
}

func (r *Run) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

func (r *Run) loadRequests(path string) {
	intern := map[string]string{} // label values repeat: keep one copy of each
	in := func(s string) string {
		if v, ok := intern[s]; ok {
			return v
		}
		intern[s] = s
		return s
	}
	err := record.ReadRequestsFile(path, func(_ int, q record.Request) {
		if q.Kind == "stage" {
			return // stages are inside their transaction's latency
		}
		l := Labels{Type: in(q.Type), Tenant: in(q.Tenant), Priority: in(q.Priority), Phase: in(q.Phase)}
		r.Samples = append(r.Samples, Sample{E2EMs: q.E2EMs, TTFTMs: q.TTFTMs, ITLMs: gaps(q.TokenNS, q.TokenNSDropped),
			EndS: float64(q.EndNS) / 1e9, DueS: float64(q.IntendedNS) / 1e9, OK: q.OK, Labels: l})
	})
	if errors.Is(err, os.ErrNotExist) {
		r.problem("requests.jsonl is missing: no latency figures")
		return
	}
	for _, line := range splitJoined(err) {
		r.problem("%v", line)
	}
}

func (r *Run) loadMetrics(path string) {
	tl, err := capture.ReadMetricsFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return // a target without /metrics, or an older run: not a problem
	}
	r.Metrics = tl
	for _, line := range splitJoined(err) {
		r.problem("%v", line)
	}
}

// gaps are the inter-token gaps of a streamed response in ms, at most
// maxITL of them evenly spaced.
// A record that dropped timestamps keeps the first ones and the last:
// the gap to the last is not one gap, so it is left out.
func gaps(tokens []int64, dropped int) []float32 {
	if dropped > 0 && len(tokens) > 0 {
		tokens = tokens[:len(tokens)-1]
	}
	n := len(tokens) - 1
	if n < 1 {
		return nil
	}
	k := min(n, maxITL)
	out := make([]float32, 0, k)
	for i := range k {
		j := i * n / k
		if d := tokens[j+1] - tokens[j]; d >= 0 {
			out = append(out, float32(float64(d)/1e6))
		}
	}
	return out
}

// splitJoined lists the errors inside an errors.Join result.
func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// groupDimensions lists the labels that split the run's samples into
// several groups, in the order phase (policies), tenant, priority, type.
func groupDimensions(samples []Sample) []string {
	var out []string
	for _, dim := range dimensions {
		first := ""
		for i, s := range samples {
			if v := s.Labels.Get(dim); i == 0 {
				first = v
			} else if v != first {
				out = append(out, dim)
				break
			}
		}
	}
	return out
}

// safeName turns a label into a file-name part.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// naturalLess orders strings with their digit runs compared as numbers
// ("n2@6.00" before "n2@12.00", "run2" before "run10").
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// digits is the length of s's leading run of ASCII digits.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
