package q4

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// fileScales is Q4's record of the scales it searched: the pool size and
// the LLM slots the target listed at it (what the search's first jump,
// slots ÷ service time, read from the target rather than from requests).
const fileScales = "scales.jsonl"

// scaleRecord is a line of scales.jsonl.
type scaleRecord struct {
	Engines int `json:"engines"`
	Slots   int `json:"slots"` // 0: the target did not list them
}

// file is scales.jsonl.
func (s *searcher) file() record.File {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, sc := range s.sizes {
		_ = enc.Encode(sc) // two ints
	}
	return record.File{Name: fileScales, Data: b.Bytes()}
}

// Recompute computes the result from the run's records alone: it runs
// the search again at each recorded scale, each trial reading back the
// records of the phase it sent (n<engines>@<rate>[#trial]) instead of
// sending, so every verdict, bracket and efficiency is computed from the
// requests as the run computed them. A trial the search asks for that
// the run did not record is an error: the records do not hold the run.
func (q *q4) Recompute(rec workload.Records) (result.Result, error) {
	scales, err := readScales(rec.Files[fileScales])
	if err != nil {
		return result.Result{}, err
	}
	byPhase := map[string][]record.Request{}
	for _, r := range rec.Requests {
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	interrupted := map[string]bool{}
	for _, p := range rec.Phases {
		interrupted[p.Name] = p.Interrupted
	}
	var missing []string
	s := &searcher{q: q}
	s.send = func(phase string, _ float64, _ time.Duration) ([]record.Request, bool) {
		cut, ok := interrupted[phase]
		if !ok {
			missing = append(missing, phase)
			return nil, false
		}
		return byPhase[phase], !cut
	}
	var fs []Frontier
	for i, sc := range scales {
		fs = append(fs, s.frontier(i, fs, sc))
	}
	if len(missing) > 0 {
		return result.Result{}, fmt.Errorf("the search asks for trials the run did not record: %v", missing)
	}
	var out workload.Outcome
	q.outcome(&out, fs)
	return out.Result, nil
}

// readScales reads scales.jsonl.
func readScales(b []byte) ([]scaleRecord, error) {
	var out []scaleRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		var r scaleRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", fileScales, line, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
