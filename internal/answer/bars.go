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

func q1Panels(c Column, w vg.Length) (panelSet, error) {
	t, ok := table(c.Result, "Stage breakdown")
	if !ok {
		return panelSet{why: "the result has no stage breakdown"}, nil
	}
	p50, p99 := column(t, []string{"p50"}, "p50_ms"), column(t, []string{"p99"}, "p99_ms")
	var stages []string
	var s50, s99 []result.Metric
	for _, row := range t.Rows {
		stages = append(stages, cellText(row, 0))
		s50, s99 = append(s50, cellMetric(row, p50)), append(s99, cellMetric(row, p99))
	}
	sp := chart.NewCategoryPanel("time per stage", "ms")
	leg := chart.Bars(sp, stages, []chart.BarSeries{{Name: "p50", Metrics: s50}, {Name: "p99", Metrics: s99, Light: true}})
	rp := chart.NewCategoryPanel("retrieval quality", "%")
	quality := []result.Metric{percent(metric(c.Result, "recall_at_k")), percent(metric(c.Result, "source_doc_retrieved"))}
	leg = append(leg, chart.Bars(rp, []string{"recall@k", "source doc found"}, []chart.BarSeries{{Name: "retrieval", Metrics: quality, Color: 2}})...)
	rp.Y.Max = 100
	return panelSet{panels: []*plot.Plot{sp, rp}, legend: leg, horizontal: true}, nil
}

var q2Recipe = recipe{
	title: "Critical-class latency and SLO attainment per scheduling policy",
	caption: "Left: p99 time to first token of the critical class under each policy, with its interval when the result has one " +
		"(repetitions pooled) and the critical TTFT SLO dashed. Right: the critical class's SLO attainment. Lower left and higher right are better.",
	build: q2Panels,
}

func q2Panels(c Column, w vg.Length) (panelSet, error) {
	t, ok := table(c.Result, "Policies")
	if !ok {
		return panelSet{why: "the result has no per-policy table"}, nil
	}
	ttft := column(t, []string{"critical p99 TTFT"}, "critical_ttft_p99_ms")
	slo := column(t, []string{"critical SLO attainment"}, "critical_slo_attainment")
	if ttft < 0 && slo < 0 {
		return panelSet{why: "the per-policy table has no critical-class columns"}, nil
	}
	var pols []string
	var tt, ss []result.Metric
	for _, row := range t.Rows {
		pols = append(pols, cellText(row, 0))
		tt, ss = append(tt, cellMetric(row, ttft)), append(ss, percent(cellMetric(row, slo)))
	}
	lp := chart.NewCategoryPanel("critical p99 TTFT", "ms")
	leg := chart.Bars(lp, pols, []chart.BarSeries{{Name: "critical p99 TTFT", Metrics: tt}})
	if b, ok := configMs(c.RunConfig, section("Q2"), "classes", "priority=critical", "slo", "llm_ttft"); ok {
		leg = append(leg, boundLine(lp, b, "critical TTFT SLO"))
	}
	rp := chart.NewCategoryPanel("critical SLO attainment", "%")
	leg = append(leg, chart.Bars(rp, pols, []chart.BarSeries{{Name: "critical SLO attainment", Metrics: ss, Color: 2}})...)
	rp.Y.Max = 100
	return panelSet{panels: []*plot.Plot{lp, rp}, legend: leg, horizontal: true}, nil
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

func q3Panels(c Column, w vg.Length) (panelSet, error) {
	t, ok := table(c.Result, "Isolation per policy")
	if !ok {
		return panelSet{why: "the result has no per-policy isolation table"}, nil
	}
	alone, cont := column(t, []string{"alone"}, "victim_ttft_p99_alone_ms"), column(t, []string{"contended"}, "victim_ttft_p99_contended_ms")
	ratio := column(t, []string{"interference ratio"}, "interference_ratio")
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
	p := chart.NewCategoryPanel("victim p99 TTFT", "ms")
	leg := chart.Bars(p, pols, []chart.BarSeries{{Name: "victim alone", Metrics: a, Light: true}, {Name: "victim contended", Metrics: k}})
	if b, ok := configMs(c.RunConfig, section("Q3"), "slo", "ttft"); ok {
		leg = append(leg, boundLine(p, b, "TTFT SLO"))
	}
	return panelSet{panels: []*plot.Plot{p}, legend: leg}, nil
}

var q6Recipe = recipe{
	title:   "SLO attainment inside bursts and in the base load, per priority and policy",
	caption: "Share of requests meeting their SLO, per policy: high priority (blue) and low priority (orange), inside bursts (solid) and in the base load between them (light).",
	build:   q6Panels,
}

func q6Panels(c Column, w vg.Length) (panelSet, error) {
	t, ok := table(c.Result, "Burst and base windows")
	if !ok {
		return panelSet{why: "the result has no burst and base table"}, nil
	}
	pc, wc, rc := textColumn(t, "policy"), textColumn(t, "window"), textColumn(t, "priority")
	slo := column(t, []string{"SLO attainment"}, "slo_attainment")
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
		cells[[3]string{pol, cellText(row, wc), cellText(row, rc)}] = percent(cellMetric(row, slo))
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
	p := chart.NewCategoryPanel("SLO attainment", "%")
	leg := chart.Bars(p, pols, series)
	p.Y.Max = 100
	return panelSet{panels: []*plot.Plot{p}, legend: leg}, nil
}
