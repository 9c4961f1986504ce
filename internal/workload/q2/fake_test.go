package q2_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/target/targettest"
	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

const fakeQ2 = workloadtest.Loose + `q2:
  schedule: {process: poisson, rate: 40, count: %d}
  policies: [%s]
  llm: {max_tokens: 4, prompt_words: 8}
  embedding: {inputs: 1, words: 8}
  queue_metric: {interval: 100ms}
`

// TestQueueFromTargetMetrics: a target that sends no queue-wait header
// but exposes vLLM's vllm:num_requests_waiting: Q2 reads the queue's
// occupancy from that gauge (and says so); a target with neither leaves
// it not measurable, never 0. On a pool that orders by priority the
// answer names priority for the critical class, against fifo.
func TestQueueFromTargetMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 5 s of traffic")
	}
	for _, tc := range []struct {
		name     string
		metric   string
		count    int
		policies string
	}{
		{"vLLM gauge", "vllm:num_requests_waiting", 80, "fifo, priority"},
		{"no queue figure", "", 30, "fifo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each against its own fake
			srv := targettest.NewSlots(t, targettest.SlotsConfig{Slots: 2, Service: 100 * time.Millisecond, QueueMetric: tc.metric})
			res := workloadtest.Run(t, 2*time.Minute, "Q2", fmt.Sprintf(fakeQ2, tc.count, tc.policies), "--target", srv.URL)
			if res.Code != 0 || len(res.Runs) != 1 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
			}
			r := res.Runs[0].Result
			busy, _ := r.Metric("fifo.llm_queue_busy")
			depth, _ := r.Metric("fifo.llm_queue_depth_max")
			t.Logf("fifo: queue busy %s, max depth %s (%s)", result.Short(busy), result.Short(depth), busy.Reason)
			if tc.metric == "" {
				if busy.State != result.NotMeasurable || !strings.Contains(busy.Reason, "vllm:num_requests_waiting") {
					t.Errorf("no queue figure at all: %+v, want not measurable naming what was looked for", busy)
				}
				return
			}
			if !busy.Measured() || !(busy.Value > 0.3) || !(depth.Value >= 3) || !strings.Contains(busy.Reason, tc.metric) {
				t.Errorf("busy %+v, max depth %+v: want the overloaded queue read from %s", busy, depth, tc.metric)
			}
			// A few dozen critical requests cannot measure a p99: the answer
			// says so with n, and the share that met the SLO still tells
			// priority from fifo.
			if p := r.Primary; p.Measured() || !strings.Contains(r.Answer, "fifo ≥ ") || !strings.Contains(r.Answer, "(n = ") {
				t.Errorf("primary %+v, answer %q: want no p99 claimed from a small sample, each policy's bound with n", p, r.Answer)
			}
			pa, _ := r.Metric("priority.critical_slo_attainment")
			fa, _ := r.Metric("fifo.critical_slo_attainment")
			if !pa.Measured() || !fa.Measured() || !(pa.Value > fa.Value) {
				t.Errorf("critical SLO attainment: priority %s, fifo %s; want priority ahead", result.Short(pa), result.Short(fa))
			}
		})
	}
}
