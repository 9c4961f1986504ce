package calibrate

import (
	"encoding/json"
	"fmt"
)

// genai-bench (sgl-project) writes, per scenario and concurrency, an
// experiment directory holding <scenario>_<task>_num_concurrency_<C>_time_<T>s.json:
// individual_request_metrics (ttft, tpot, e2e_latency in _time_unit,
// num_output_tokens, error_code) and aggregated_metrics.stats (p50 …).
type gbFile struct {
	TimeUnit   string `json:"_time_unit"`
	Individual []struct {
		TTFT      *float64 `json:"ttft"`
		TPOT      *float64 `json:"tpot"`
		E2E       *float64 `json:"e2e_latency"`
		OutTokens *float64 `json:"num_output_tokens"`
		ErrorCode *int     `json:"error_code"`
	} `json:"individual_request_metrics"`
	Aggregated struct {
		Requests int `json:"num_requests"`
		Stats    map[string]struct {
			P50 *float64 `json:"p50"`
		} `json:"stats"`
	} `json:"aggregated_metrics"`
}

func readGenAIBench(path string) (Export, error) {
	p, err := findFile(path, "*_num_concurrency_*.json", "*_batch_size_*.json")
	if err != nil {
		return Export{}, err
	}
	b, err := readBounded(p)
	if err != nil {
		return Export{}, err
	}
	return parseGenAIBench(b)
}

func parseGenAIBench(b []byte) (Export, error) {
	var f gbFile
	if err := json.Unmarshal(b, &f); err != nil {
		return Export{}, fmt.Errorf("genai-bench result: %w", err)
	}
	scale := msScale(f.TimeUnit)
	if f.TimeUnit == "" {
		scale = 1e3 // files before _time_unit are in seconds
	}
	var e Export
	for _, r := range f.Individual {
		if r.ErrorCode != nil {
			e.Failed++
			continue
		}
		var s Sample
		for m, v := range map[Metric]*float64{TTFT: r.TTFT, ITL: r.TPOT, E2E: r.E2E} {
			if v != nil {
				s.set(m, *v*scale)
			}
		}
		if r.OutTokens != nil {
			s.set(OutputTokens, *r.OutTokens)
		}
		e.Requests = append(e.Requests, s)
	}
	for m, name := range map[Metric]string{TTFT: "ttft", ITL: "tpot", E2E: "e2e_latency", OutputTokens: "num_output_tokens"} {
		st, ok := f.Aggregated.Stats[name]
		if !ok || st.P50 == nil {
			continue
		}
		if m == OutputTokens {
			e.own(m, *st.P50)
		} else {
			e.own(m, *st.P50*scale)
		}
	}
	e.Lag = "none (closed loop: concurrency, no schedule)"
	return e, nil
}
