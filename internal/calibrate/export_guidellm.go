package calibrate

import (
	"encoding/json"
	"fmt"
)

// GuideLLM (vLLM project) writes benchmarks.json: per benchmark (one per
// rate of a sweep) requests.successful/errored/incomplete, each request
// with time_to_first_token_ms, inter_token_latency_ms (first token
// excluded), time_per_output_token_ms (first token included),
// request_latency in s and output_tokens; and metrics.<name>.successful
// (median, percentiles: the inverted CDF, see CDFQuantile). The grader
// reads the first benchmark.
type glStat struct {
	Successful struct {
		Median      *float64           `json:"median"`
		Percentiles map[string]float64 `json:"percentiles"`
	} `json:"successful"`
}

type glFile struct {
	Benchmarks []struct {
		Requests struct {
			Successful []struct {
				Start     float64  `json:"request_start_time"`
				TTFT      *float64 `json:"time_to_first_token_ms"`
				ITL       *float64 `json:"inter_token_latency_ms"`
				Latency   *float64 `json:"request_latency"`
				OutTokens *float64 `json:"output_tokens"`
			} `json:"successful"`
			Errored    []json.RawMessage `json:"errored"`
			Incomplete []json.RawMessage `json:"incomplete"`
		} `json:"requests"`
		Metrics   map[string]json.RawMessage `json:"metrics"`
		Scheduler struct {
			MeasureEnd float64 `json:"measure_end_time"`
		} `json:"scheduler_metrics"`
	} `json:"benchmarks"`
}

func readGuideLLM(path string) (Export, error) {
	p, err := findFile(path, "benchmarks.json")
	if err != nil {
		return Export{}, err
	}
	b, err := readBounded(p)
	if err != nil {
		return Export{}, err
	}
	return parseGuideLLM(b)
}

func parseGuideLLM(b []byte) (Export, error) {
	var f glFile
	if err := json.Unmarshal(b, &f); err != nil {
		return Export{}, fmt.Errorf("benchmarks.json: %w", err)
	}
	if len(f.Benchmarks) == 0 {
		return Export{}, fmt.Errorf("benchmarks.json: no benchmarks")
	}
	bm := f.Benchmarks[0]
	e := Export{Quantile: CDFQuantile}
	if len(f.Benchmarks) > 1 {
		e.Notes = append(e.Notes, fmt.Sprintf("%d benchmarks in the file: the first is graded", len(f.Benchmarks)))
	}
	e.Failed = len(bm.Requests.Errored) + len(bm.Requests.Incomplete)
	late := 0
	for _, r := range bm.Requests.Successful {
		if end := bm.Scheduler.MeasureEnd; end > 0 && r.Start > end {
			late++ // listed, but left out of GuideLLM's own statistics
			continue
		}
		var s Sample
		for m, v := range map[Metric]*float64{TTFT: r.TTFT, ITL: r.ITL, OutputTokens: r.OutTokens} {
			if v != nil {
				s.set(m, *v)
			}
		}
		if r.Latency != nil {
			s.set(E2E, *r.Latency*1e3)
		}
		e.Requests = append(e.Requests, s)
	}
	if late > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("%d answered requests started after GuideLLM's measure window closed: listed in its export but left out of its own statistics (counted lost here)", late))
	}
	for m, name := range map[Metric]string{TTFT: "time_to_first_token_ms", ITL: "inter_token_latency_ms", E2E: "request_latency", OutputTokens: "output_token_count"} {
		if st, ok := glMetric(bm.Metrics, name); ok {
			scale := 1.0
			if m == E2E {
				scale = 1e3
			}
			e.own(m, *st.Successful.Median*scale)
		}
	}
	if d, ok := glMetric(bm.Metrics, "request_dispatch_delay"); ok {
		e.Lag = fmt.Sprintf("request dispatch delay p50 %.3f ms, p99 %.3f ms", *d.Successful.Median*1e3, d.Successful.Percentiles["p99"]*1e3)
	}
	return e, nil
}

// glMetric is metrics[name] when it is a distribution with a median
// (some metrics, request_totals, are plain counts).
func glMetric(metrics map[string]json.RawMessage, name string) (glStat, bool) {
	var st glStat
	raw, ok := metrics[name]
	if !ok || json.Unmarshal(raw, &st) != nil || st.Successful.Median == nil {
		return glStat{}, false
	}
	return st, true
}
