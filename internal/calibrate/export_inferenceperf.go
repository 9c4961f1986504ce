package calibrate

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// inference-perf (kubernetes-sigs) writes, per run, a report directory
// with per_request_lifecycle_metrics.json (one object per request: start
// and end on the monotonic clock in seconds, the time of every output
// token, or an error) and summary_lifecycle_metrics.json (quantiles in
// seconds, schedule delay included).
type ipRequest struct {
	Start float64 `json:"start_time"`
	End   float64 `json:"end_time"`
	Info  struct {
		Response struct {
			OutputTokens int       `json:"output_tokens"`
			TokenTimes   []float64 `json:"output_token_times"`
		} `json:"response_metrics"`
	} `json:"info"`
	Error json.RawMessage `json:"error"`
}

type ipQuantiles struct {
	Median *float64 `json:"median"`
	P99    *float64 `json:"p99"`
}

type ipSummary struct {
	Load struct {
		Count         int         `json:"count"`
		ScheduleDelay ipQuantiles `json:"schedule_delay"`
	} `json:"load_summary"`
	Successes struct {
		Latency struct {
			E2E  ipQuantiles `json:"request_latency"`
			TTFT ipQuantiles `json:"time_to_first_token"`
			TPOT ipQuantiles `json:"time_per_output_token"`
		} `json:"latency"`
		OutputLen ipQuantiles `json:"output_len"`
	} `json:"successes"`
}

func readInferencePerf(path string) (Export, error) {
	reqPath, err := findFile(path, "per_request_lifecycle_metrics.json")
	if err != nil {
		return Export{}, err
	}
	b, err := readBounded(reqPath)
	if err != nil {
		return Export{}, err
	}
	e, err := parseInferencePerfRequests(b)
	if err != nil {
		return Export{}, err
	}
	var s ipSummary
	if err := decodeFile(filepath.Join(filepath.Dir(reqPath), "summary_lifecycle_metrics.json"), &s); err != nil {
		e.Notes = append(e.Notes, "no summary_lifecycle_metrics.json: own medians unknown")
		return e, nil
	}
	inferencePerfOwn(&e, s)
	return e, nil
}

func parseInferencePerfRequests(b []byte) (Export, error) {
	var reqs []ipRequest
	if err := json.Unmarshal(b, &reqs); err != nil {
		return Export{}, fmt.Errorf("per_request_lifecycle_metrics.json: %w", err)
	}
	var e Export
	for _, r := range reqs {
		if len(r.Error) > 0 && string(r.Error) != "null" {
			e.Failed++
			continue
		}
		var s Sample
		s.set(E2E, (r.End-r.Start)*1e3)
		if t := r.Info.Response.TokenTimes; len(t) > 0 {
			s.set(TTFT, (t[0]-r.Start)*1e3)
			if len(t) > 1 {
				s.set(ITL, (t[len(t)-1]-t[0])*1e3/float64(len(t)-1))
			}
		}
		if r.Info.Response.OutputTokens > 0 {
			s.set(OutputTokens, float64(r.Info.Response.OutputTokens))
		}
		e.Requests = append(e.Requests, s)
	}
	return e, nil
}

func inferencePerfOwn(e *Export, s ipSummary) {
	set := func(m Metric, q ipQuantiles, scale float64) {
		if q.Median != nil {
			e.own(m, *q.Median*scale)
		}
	}
	set(TTFT, s.Successes.Latency.TTFT, 1e3)
	set(E2E, s.Successes.Latency.E2E, 1e3)
	set(ITL, s.Successes.Latency.TPOT, 1e3)
	set(OutputTokens, s.Successes.OutputLen, 1)
	if d := s.Load.ScheduleDelay; d.Median != nil && d.P99 != nil {
		e.Lag = fmt.Sprintf("schedule delay p50 %.3f ms, p99 %.3f ms", *d.Median*1e3, *d.P99*1e3)
	}
}
