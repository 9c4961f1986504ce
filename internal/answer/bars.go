package answer

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/result"
)

var q1Recipe = recipe{
	title: "Where a RAG transaction spends its time, and what retrieval finds",
	caption: "Left: p50 (solid) and p99 (light) time in each stage of the pipeline (queueing and service in the runtime), from the result's stage breakdown. " +
		"Right: recall@k of retrieval against exact search, and the share of questions whose source document was retrieved.",
	build: q1Panels,
}

func q1Panels(c Column, key string, w vg.Length) (panelSet, error) {
	t, ok := table(c.Result, key, holds("p50_ms", "p99_ms"))
	if !ok {
		return panelSet{why: "the result has no stage breakdown (table " + key + ")"}, nil
	}
	var stages []string
	var s50, s99 []result.Metric
	for _, row := range t.Rows {
		st := cellText(row, 0)
		stages = append(stages, st)
		s50, s99 = append(s50, rowMetric(row, "stage_"+st+"_p50_ms")), append(s99, rowMetric(row, "stage_"+st+"_p99_ms"))
	}
	sp := categoryAxis("time per stage", result.Ms)
	leg, err := sp.bars(stages, []chart.BarSeries{{Name: "p50", Metrics: s50}, {Name: "p99", Metrics: s99, Light: true}})
	if err != nil {
		return panelSet{}, err
	}
	rp := categoryAxis("retrieval quality", "%")
	quality := []result.Metric{metric(c.Result, "recall_at_k"), metric(c.Result, "source_doc_retrieved")}
	e, err := rp.bars([]string{"recall@k", "source doc found"}, []chart.BarSeries{{Name: "retrieval", Metrics: quality, Color: 2}})
	if err != nil {
		return panelSet{}, err
	}
	rp.p.Y.Max = 100
	return panelSet{panels: []*plot.Plot{sp.p, rp.p}, legend: append(leg, e...), horizontal: true}, nil
}

var q2Recipe = recipe{
	title: "Critical-class latency and SLO attainment per scheduling policy",
	caption: "Left: p99 time to first token of the critical class under each policy, with its interval when the result has one " +
		"(repetitions pooled) and the critical TTFT SLO dashed. Right: the critical class's SLO attainment. Lower left and higher right are better.",
	build: q2Panels,
}

func q2Panels(c Column, key string, w vg.Length) (panelSet, error) {
	t, ok := table(c.Result, key, holds("critical_ttft_p99_ms"))
	if !ok {
		return panelSet{why: "the result has no per-policy table (table " + key + ")"}, nil
	}
	ttft, slo := column(t, "critical_ttft_p99_ms"), column(t, "critical_slo_attainment")
	if ttft < 0 && slo < 0 {
		return panelSet{why: "the per-policy table has no critical-class metrics"}, nil
	}
	var pols []string
	var tt, ss []result.Metric
	for _, row := range t.Rows {
		pols = append(pols, cellText(row, 0))
		tt, ss = append(tt, cellMetric(row, ttft)), append(ss, cellMetric(row, slo))
	}
	lp := categoryAxis("critical p99 TTFT", result.Ms)
	leg, err := lp.bars(pols, []chart.BarSeries{{Name: "critical p99 TTFT", Metrics: tt}})
	if err != nil {
		return panelSet{}, err
	}
	if b, ok := bound(c.Result, "critical_ttft_slo_ms"); ok {
		leg = append(leg, boundLine(lp.p, b, "critical TTFT SLO"))
	}
	rp := categoryAxis("critical SLO attainment", "%")
	e, err := rp.bars(pols, []chart.BarSeries{{Name: "critical SLO attainment", Metrics: ss, Color: 2}})
	if err != nil {
		return panelSet{}, err
	}
	rp.p.Y.Max = 100
	return panelSet{panels: []*plot.Plot{lp.p, rp.p}, legend: append(leg, e...), horizontal: true}, nil
}

// boundLine draws a dashed bound at y on p and returns its legend entry.
func boundLine(p *plot.Plot, y float64, name string) chart.LegendEntry {
	h := chart.HLine{Y: y, Color: chart.BoundInk, Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	p.Add(h)
	return chart.LegendEntry{Label: fmt.Sprintf("%s (%s ms)", name, chart.Number(y, 0)), Thumbs: []plot.Thumbnailer{h}}
}

var q3Recipe = recipe{
	title: "The victim tenant alone and beside the aggressor, per policy",
	caption: "p99 time to first token of the victim tenant alone (light) and contended (solid) under each policy; " +
		"the interference ratio (contended ÷ alone) follows each policy's name. The TTFT SLO is dashed.",
	build: q3Panels,
}

func q3Panels(c Column, key string, w vg.Length) (panelSet, error) {
	t, ok := table(c.Result, key, holds("victim_ttft_p99_contended_ms"))
	if !ok {
		return panelSet{why: "the result has no per-policy isolation table (table " + key + ")"}, nil
	}
	alone, cont := column(t, "victim_ttft_p99_alone_ms"), column(t, "victim_ttft_p99_contended_ms")
	ratio := column(t, "interference_ratio")
	var pols []string
	var a, k []result.Metric
	for _, row := range t.Rows {
		name := cellText(row, 0)
		if r := cellMetric(row, ratio); r.Name != "" {
			name += " (" + result.Short(r) + ")"
		}
		pols = append(pols, name)
		a, k = append(a, cellMetric(row, alone)), append(k, cellMetric(row, cont))
	}
	p := categoryAxis("victim p99 TTFT", result.Ms)
	leg, err := p.bars(pols, []chart.BarSeries{{Name: "victim alone", Metrics: a, Light: true}, {Name: "victim contended", Metrics: k}})
	if err != nil {
		return panelSet{}, err
	}
	if b, ok := bound(c.Result, "victim_ttft_slo_ms"); ok {
		leg = append(leg, boundLine(p.p, b, "TTFT SLO"))
	}
	return panelSet{panels: []*plot.Plot{p.p}, legend: leg}, nil
}

var q6Recipe = recipe{
	title:   "SLO attainment inside bursts and in the base load, per priority and policy",
	caption: "Share of requests meeting their SLO, per policy: high priority (blue) and low priority (orange), inside bursts (solid) and in the base load between them (light).",
	build:   q6Panels,
	height:  2.4 * vg.Inch, // a column figure's legend under a quarter of it
}

func q6Panels(c Column, key string, w vg.Length) (panelSet, error) {
	t, ok := table(c.Result, key, func(t result.Table) bool {
		return textColumn(t, "window") >= 0 && textColumn(t, "priority") >= 0
	})
	if !ok {
		return panelSet{why: "the result has no burst and base table (table " + key + ")"}, nil
	}
	pc, wc, rc := textColumn(t, "policy"), textColumn(t, "window"), textColumn(t, "priority")
	slo := column(t, "slo_attainment")
	if pc < 0 || wc < 0 || rc < 0 || slo < 0 {
		return panelSet{why: "the burst and base table lacks policy, window, priority or SLO attainment"}, nil
	}
	var pols []string
	cells := map[[3]string]result.Metric{}
	for _, row := range t.Rows {
		pol := cellText(row, pc)
		if !slices.Contains(pols, pol) {
			pols = append(pols, pol)
		}
		cells[[3]string{pol, cellText(row, wc), cellText(row, rc)}] = cellMetric(row, slo)
	}
	var series []chart.BarSeries
	for i, pr := range []string{"high", "low"} {
		for _, win := range []string{"burst", "base"} {
			s := chart.BarSeries{Name: pr + " priority, " + win, Color: i, Light: win == "base"}
			for _, pol := range pols {
				s.Metrics = append(s.Metrics, cells[[3]string{pol, win, pr}])
			}
			series = append(series, s)
		}
	}
	p := categoryAxis("SLO attainment", "%")
	leg, err := p.bars(pols, series)
	if err != nil {
		return panelSet{}, err
	}
	p.p.Y.Max = 100
	return panelSet{panels: []*plot.Plot{p.p}, legend: leg}, nil
}
