package ray

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
)

// Markers of the driver's lines in the job log: one record, the run's
// metadata, and the end of the records (with their count).
const (
	MarkRecord = "SAGEBENCH_RECORD "
	MarkMeta   = "SAGEBENCH_META "
	MarkDone   = "SAGEBENCH_DONE "
)

// Meta is what the driver reports about itself and the cluster.
type Meta struct {
	RayVersion       string             `json:"ray_version"`
	ClusterResources map[string]float64 `json:"cluster_resources"`
	// StartUnixNS is the driver's schedule zero (unix ns, its clock):
	// the records' offsets count from it.
	StartUnixNS int64  `json:"start_unix_ns"`
	Runtime     string `json:"runtime"` // "ray" or "local" (the test seam)
}

// Output is what ParseOutput found in a job log.
type Output struct {
	Meta    *Meta
	Records []json.RawMessage
	// Done is true when the driver wrote its end line and it counted
	// len(Records): the log holds every record.
	Done bool
	// Other is the log without the marked lines (for the user).
	Other string
}

// ParseOutput reads the driver's marked lines out of a job log. Lines
// may carry a prefix (Ray's log prefixes); a marked line that does not
// decode is an error naming its line number.
func ParseOutput(logs string) (Output, error) {
	var out Output
	var other strings.Builder
	want := -1
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		mark, rest := split(line)
		var err error
		switch mark {
		case MarkRecord:
			if !json.Valid([]byte(rest)) || !strings.HasPrefix(rest, "{") {
				err = fmt.Errorf("not a JSON object")
			}
			out.Records = append(out.Records, json.RawMessage(rest))
		case MarkMeta:
			out.Meta = &Meta{}
			err = json.Unmarshal([]byte(rest), out.Meta)
		case MarkDone:
			var d struct {
				Records int `json:"records"`
			}
			err = json.Unmarshal([]byte(rest), &d)
			want = d.Records
		default:
			other.WriteString(line)
			other.WriteByte('\n')
		}
		if err != nil {
			return out, fmt.Errorf("ray: job log line %d (%s): %v", n, strings.TrimSpace(mark), err)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("ray: reading the job log: %w", err)
	}
	out.Done = want == len(out.Records)
	out.Other = other.String()
	return out, nil
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
