package q2

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// fileQueue is Q2's record of the target's queue gauge: the samples its
// occupancy and depth figures read (they come from /metrics, not from
// the requests).
const fileQueue = "queue.json"

// queueRecord is queue.json.
type queueRecord struct {
	// Sampled: the target had a /metrics URL to sample (false: none).
	Sampled bool          `json:"sampled"`
	Names   []string      `json:"names,omitempty"`  // the gauges looked for
	Metric  string        `json:"metric,omitempty"` // the one found
	EveryNS int64         `json:"every_ns,omitempty"`
	Error   string        `json:"error,omitempty"` // the last scrape's failure, redacted
	Samples []queueSample `json:"samples,omitempty"`
}

type queueSample struct {
	AtNS  int64   `json:"at_ns"` // since the run's start
	Depth float64 `json:"depth"`
}

// file is queue.json.
func (s *queueSampler) file() (record.File, error) {
	var qr queueRecord
	if s != nil {
		s.mu.Lock()
		qr = queueRecord{Sampled: true, Names: s.names, Metric: s.name, EveryNS: int64(s.every)}
		for _, x := range s.samples {
			qr.Samples = append(qr.Samples, queueSample{AtNS: int64(x.at), Depth: x.depth})
		}
		s.mu.Unlock()
		qr.Error = s.failure()
	}
	b, err := json.Marshal(qr)
	return record.File{Name: fileQueue, Data: b}, err
}

// readQueue is the sampler queue.json recorded (nil: none was run).
func readQueue(b []byte) (*queueSampler, error) {
	var qr queueRecord
	if err := json.Unmarshal(b, &qr); err != nil {
		return nil, fmt.Errorf("%s: %w", fileQueue, err)
	}
	if !qr.Sampled {
		return nil, nil
	}
	s := &queueSampler{names: qr.Names, name: qr.Metric, every: time.Duration(qr.EveryNS), errLine: qr.Error,
		clean: func(s string) string { return s }}
	for _, x := range qr.Samples {
		s.samples = append(s.samples, depthSample{at: time.Duration(x.AtNS), depth: x.Depth})
	}
	return s, nil
}

// Recompute computes the result from the run's records alone: the
// sub-runs are run.json's phases (<policy> or <policy>.r<round>, or the
// one phase of a target that kept its own policy), the queue gauge's
// samples queue.json.
func (q *q2) Recompute(rec workload.Records) (result.Result, error) {
	qs, err := readQueue(rec.Files[fileQueue])
	if err != nil {
		return result.Result{}, err
	}
	names := map[string]ranPhase{}
	for round := range q.cfg.Rounds {
		for _, policy := range q.cfg.Policies {
			names[phaseName(policy, round, q.cfg.Rounds)] = ranPhase{policy: policy, round: round}
		}
	}
	var ran []ranPhase
	for _, p := range rec.Phases {
		rp, ok := names[p.Name]
		if !ok { // the target kept its own policy, named by the phase
			rp = ranPhase{policy: p.Name}
		}
		rp.Phase = p
		ran = append(ran, rp)
	}
	return q.figures(ran, rec.Requests, qs), nil
}
