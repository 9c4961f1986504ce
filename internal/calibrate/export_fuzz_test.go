package calibrate_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/calibrate"
)

// seed adds testdata/<tool>/<file> (a real export) and a few broken
// variants to the corpus.
func seed(f *testing.F, tool, file string) {
	b, err := os.ReadFile(filepath.Join("testdata", tool, file))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte("{}"))
	f.Add([]byte("[]"))
	f.Add([]byte(`[{"start_time":1e308,"end_time":-1e308}]`))
}

// finite: a parser never hands the grader a NaN or an infinity, and the
// grade of whatever it returns is computed without panicking.
func finite(t *testing.T, e calibrate.Export) {
	for _, s := range e.Requests {
		for m, v := range s.V {
			if s.Has[m] && (math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Fatalf("metric %d: %v", m, v)
			}
		}
	}
	calibrate.GradeExport(e, nil)
}

func FuzzReadSagebench(f *testing.F) {
	seed(f, "sagebench", "requests.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, sent := range []bool{false, true} {
			if e, err := calibrate.ParseSagebench(b, sent); err == nil {
				finite(t, e)
			}
		}
	})
}

func FuzzReadInferencePerf(f *testing.F) {
	seed(f, "inference-perf", "per_request_lifecycle_metrics.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, err := calibrate.ParseInferencePerf(b); err == nil {
			finite(t, e)
		}
	})
}

func FuzzReadAIPerf(f *testing.F) {
	seed(f, "aiperf", "profile_export.jsonl")
	f.Add([]byte(`{"metrics":{"time_to_first_token":{"value":"x","unit":"s"},"request_latency":{"value":1e308,"unit":"s"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, err := calibrate.ParseAIPerf(b); err == nil {
			finite(t, e)
		}
	})
}

func FuzzReadGenAIBench(f *testing.F) {
	seed(f, "genai-bench", "D8_16_text-to-text_num_concurrency_2_time_3s.json")
	f.Add([]byte(`{"_time_unit":"s","individual_request_metrics":[{"ttft":1e308,"error_code":null}],"aggregated_metrics":{"stats":{"ttft":{"p50":null}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, err := calibrate.ParseGenAIBench(b); err == nil {
			finite(t, e)
		}
	})
}

func FuzzReadGuideLLM(f *testing.F) {
	seed(f, "guidellm", "benchmarks.json")
	f.Add([]byte(`{"benchmarks":[{"requests":{"successful":[{"request_latency":1e308}]},"metrics":{"request_totals":{"successful":3}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, err := calibrate.ParseGuideLLM(b); err == nil {
			finite(t, e)
		}
	})
}
