package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
)

// AIPerf (NVIDIA) writes, per run, an artifact directory with
// profile_export.jsonl (one record per request: metadata and
// {"metric": {"value": v, "unit": u}}, or an error) and
// profile_export_aiperf.json (per metric avg and p1…p99).
type apRecord struct {
	Metadata struct {
		Phase string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

// apMetric names each graded metric in AIPerf's export.
var apMetric = [nMetrics]string{
	TTFT:         "time_to_first_token",
	ITL:          "inter_token_latency",
	E2E:          "request_latency",
	OutputTokens: "output_sequence_length",
}

func readAIPerf(path string) (Export, error) {
	recPath, err := findFile(path, "profile_export.jsonl")
	if err != nil {
		return Export{}, err
	}
	b, err := readBounded(recPath)
	if err != nil {
		return Export{}, err
	}
	e, err := parseAIPerfRecords(b)
	if err != nil {
		return Export{}, err
	}
	var sum map[string]json.RawMessage
	if err := decodeFile(filepath.Join(filepath.Dir(recPath), "profile_export_aiperf.json"), &sum); err != nil {
		e.Notes = append(e.Notes, "no profile_export_aiperf.json: own medians unknown")
		return e, nil
	}
	aiperfOwn(&e, sum)
	return e, nil
}

func parseAIPerfRecords(b []byte) (Export, error) {
	var e Export
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r apRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return Export{}, fmt.Errorf("profile_export.jsonl line %d: %w", line, err)
		}
		if r.Metadata.Phase != "" && r.Metadata.Phase != "profiling" {
			continue // warmup
		}
		if len(r.Error) > 0 && string(r.Error) != "null" {
			e.Failed++
			continue
		}
		var s Sample
		for m, name := range apMetric {
			var v float64
			if mv, ok := r.Metrics[name]; ok && json.Unmarshal(mv.Value, &v) == nil {
				s.set(Metric(m), v*msScale(mv.Unit))
			}
		}
		e.Requests = append(e.Requests, s)
	}
	if err := sc.Err(); err != nil {
		return Export{}, fmt.Errorf("profile_export.jsonl: %w", err)
	}
	return e, nil
}

// msScale converts a time unit to ms (1 for anything else, tokens).
func msScale(unit string) float64 {
	switch unit {
	case "ns":
		return 1e-6
	case "us":
		return 1e-3
	case "s", "sec":
		return 1e3
	}
	return 1
}

func aiperfOwn(e *Export, sum map[string]json.RawMessage) {
	for m, name := range apMetric {
		var st struct {
			Unit string   `json:"unit"`
			P50  *float64 `json:"p50"`
		}
		if raw, ok := sum[name]; ok && json.Unmarshal(raw, &st) == nil && st.P50 != nil {
			e.own(Metric(m), *st.P50*msScale(st.Unit))
		}
	}
}
