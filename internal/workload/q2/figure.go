package q2

import (
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/result"
)

// The keys of the result's tables (result.Table.Key): the report and the
// paper find them by these keys, whatever their titles say.
const (
	TablePolicies   = "policies"
	TableQueueDepth = "queue_depth"
)

// DefCriticalTTFTSLO is the critical class's TTFT SLO, a metric of the
// result so that a figure draws the bound the run was held to without
// reading the run's config.
var DefCriticalTTFTSLO = result.Def{Name: "critical_ttft_slo_ms", Unit: result.Ms, Direction: result.Lower}

// boundMetrics are the SLO bounds the answer figure draws.
func (q *q2) boundMetrics() []result.Metric {
	for _, k := range q.cfg.Classes {
		if k.Priority == protocol.PriorityCritical && k.SLO.LLMTTFT > 0 {
			ms := float64(k.SLO.LLMTTFT) / float64(time.Millisecond)
			return []result.Metric{DefCriticalTTFTSLO.Measure(ms, 1, "").WithReason("q2.classes critical slo.llm_ttft: the bound the run was held to")}
		}
	}
	return nil
}
