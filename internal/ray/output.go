package ray

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Markers of the driver's lines in the job log: one record, the run's
// metadata, and the end of the records (with their count).
const (
	MarkRecord = "SAGEBENCH_RECORD "
	MarkMeta   = "SAGEBENCH_META "
	MarkDone   = "SAGEBENCH_DONE "
)

// Meta is what the driver reports about itself and the cluster, once its
// stages are ready and before the first arrival.
type Meta struct {
	RayVersion       string             `json:"ray_version"`
	ClusterResources map[string]float64 `json:"cluster_resources"`
	// ReadyUnixNS is when every stage had answered ready (its actor
	// created, its connections warmed), on the driver's clock.
	ReadyUnixNS int64 `json:"ready_unix_ns"`
	// StartUnixNS is the driver's schedule zero (unix ns, its clock),
	// set after ReadyUnixNS: the records' offsets count from it.
	StartUnixNS int64 `json:"start_unix_ns"`
	// Warmup is how getting the stages ready went.
	Warmup  Warmup `json:"warmup"`
	Runtime string `json:"runtime"` // "ray" or "local" (the test seam)
}

// Ready reports whether the driver declared its stages ready before its
// schedule's zero (the contract: no arrival before readiness).
func (m *Meta) Ready() bool {
	return m != nil && m.ReadyUnixNS > 0 && m.StartUnixNS >= m.ReadyUnixNS
}

// Warmup is the driver's account of its start-up, before the schedule.
type Warmup struct {
	// StartedUnixNS is when the driver began creating the stages.
	StartedUnixNS int64         `json:"started_unix_ns"`
	Stages        []StageWarmup `json:"stages"`
}

// StageWarmup is one stage's start-up: its actor (or the seam's pool)
// ready after ReadyMS, Warmed of the Wanted keep-alive connections to the
// target opened, on Node.
type StageWarmup struct {
	Stage   string  `json:"stage"`
	ReadyMS float64 `json:"ready_ms"`
	Wanted  int     `json:"wanted"`
	Warmed  int     `json:"warmed"`
	Node    string  `json:"node,omitempty"`
}

// Output is what a job log held of the driver's lines.
type Output struct {
	Meta    *Meta
	Records []json.RawMessage
	// Done is true when the driver wrote its end line and it counted
	// len(Records): the log holds every record.
	Done bool
	// Tail is the last lines of the log without the marked ones (for an
	// error message), at most TailLines of them.
	Tail string
}

// TailLines bounds Output.Tail.
const TailLines = 20

// maxLine bounds one log line; the driver's longest is a record of a few KiB.
const maxLine = 16 << 20

// Parser reads the driver's marked lines out of a job log written to it
// in pieces of any size, as it is tailed: records and the metadata are
// kept, every other line goes to Other (nil: discarded) and the last
// TailLines of them are kept for Output.Tail. A marked line that does not
// decode is an error naming its line number; after one, Write fails.
type Parser struct {
	Other io.Writer

	out     Output
	want    int
	line    int
	partial []byte
	tail    []string
	err     error
}

// NewParser returns a parser forwarding unmarked lines to other.
func NewParser(other io.Writer) *Parser { return &Parser{Other: other, want: -1} }

var _ io.Writer = (*Parser)(nil)

// Write consumes p; lines may span calls.
func (ps *Parser) Write(p []byte) (int, error) {
	if ps.err != nil {
		return 0, ps.err
	}
	ps.partial = append(ps.partial, p...)
	for {
		i := bytes.IndexByte(ps.partial, '\n')
		if i < 0 {
			break
		}
		ps.consume(ps.partial[:i])
		ps.partial = ps.partial[i+1:]
		if ps.err != nil {
			return len(p), ps.err
		}
	}
	if len(ps.partial) > maxLine {
		ps.err = fmt.Errorf("ray: job log line %d is longer than %d bytes", ps.line+1, maxLine)
		return len(p), ps.err
	}
	ps.partial = append([]byte(nil), ps.partial...) // do not pin the consumed prefix
	return len(p), nil
}

// Output returns what was read so far, a last line without its newline
// included. Err is the first malformed marked line, if any.
func (ps *Parser) Output() (Output, error) {
	if len(ps.partial) > 0 && ps.err == nil {
		ps.consume(ps.partial)
		ps.partial = nil
	}
	out := ps.out
	out.Done = ps.want == len(out.Records)
	out.Tail = strings.Join(ps.tail, "\n")
	return out, ps.err
}

func (ps *Parser) consume(b []byte) {
	ps.line++
	line := strings.TrimSuffix(string(b), "\r")
	mark, rest := split(line)
	var err error
	switch mark {
	case MarkRecord:
		if !strings.HasPrefix(rest, "{") || !json.Valid([]byte(rest)) {
			err = fmt.Errorf("not a JSON object")
		}
		ps.out.Records = append(ps.out.Records, json.RawMessage(rest))
	case MarkMeta:
		ps.out.Meta = &Meta{}
		err = json.Unmarshal([]byte(rest), ps.out.Meta)
	case MarkDone:
		var d struct {
			Records int `json:"records"`
		}
		err = json.Unmarshal([]byte(rest), &d)
		ps.want = d.Records
	default:
		ps.other(line)
	}
	if err != nil {
		ps.err = fmt.Errorf("ray: job log line %d (%s): %v", ps.line, strings.TrimSpace(mark), err)
	}
}

func (ps *Parser) other(line string) {
	if ps.Other != nil {
		io.WriteString(ps.Other, line+"\n")
	}
	if len(ps.tail) == TailLines {
		ps.tail = append(ps.tail[:0], ps.tail[1:]...)
	}
	ps.tail = append(ps.tail, clip(line, 300))
}

// ParseOutput reads the driver's marked lines out of a whole job log.
// Lines may carry a prefix (Ray's log prefixes).
func ParseOutput(logs string) (Output, error) {
	ps := NewParser(nil)
	io.WriteString(ps, logs)
	return ps.Output()
}

// split finds a marker in line and returns it with the text after it.
func split(line string) (mark, rest string) {
	for _, m := range []string{MarkRecord, MarkMeta, MarkDone} {
		if i := strings.Index(line, m); i >= 0 {
			return m, strings.TrimSpace(line[i+len(m):])
		}
	}
	return "", line
}
