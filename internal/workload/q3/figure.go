package q3

import (
	"time"

	"github.com/sagebench/sagebench/internal/result"
)

// The keys of the result's tables (result.Table.Key): the report and the
// paper find them by these keys, whatever their titles say.
const (
	TableIsolation = "isolation"
	TableTenants   = "tenants"
)

// DefVictimTTFTSLO is the victim's TTFT SLO, a metric of the result so
// that a figure draws the bound the run was held to without reading the
// run's config.
var DefVictimTTFTSLO = result.Def{Name: "victim_ttft_slo_ms", Unit: result.Ms, Direction: result.Lower}

// boundMetrics are the SLO bounds the answer figure draws.
func (q *q3) boundMetrics() []result.Metric {
	if q.cfg.SLO.TTFT <= 0 {
		return nil
	}
	ms := float64(q.cfg.SLO.TTFT) / float64(time.Millisecond)
	return []result.Metric{DefVictimTTFTSLO.Measure(ms, 1, "").WithReason("q3.slo.ttft: the bound the run was held to")}
}
