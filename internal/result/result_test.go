package result

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

var (
	lat  = Def{Name: "ttft_p99_ms", Unit: Ms, Direction: Lower}
	frac = Def{Name: "slo_attainment", Unit: Fraction, Direction: Higher}
	rec  = Def{Name: "recovery_s", Unit: Seconds, Direction: Lower}
)

func TestMetricCheck(t *testing.T) {
	tests := []struct {
		name string
		m    Metric
		want string // "" for no error
	}{
		{"measured", lat.Measure(12, 3, ""), ""},
		{"measured zero is a value", frac.Measure(0, 5, ""), ""},
		{"negative latency", lat.Measure(-1, 3, ""), "outside [0, ∞)"},
		{"fraction above one", frac.Measure(1.001, 3, ""), "outside [0, 1]"},
		{"NaN becomes not measurable", lat.Measure(math.NaN(), 3, "no value"), ""},
		{"no samples becomes not measurable", lat.Measure(5, 0, "nothing sent"), ""},
		{"not measurable without a reason", lat.NotMeasurable(""), "without a reason"},
		{"never with a reason", rec.Never("never recovered"), ""},
		{"bound open above", lat.Within(10, math.Inf(1), 4, ""), ""},
		{"bound upside down", lat.Within(10, 5, 4, ""), "upside down"},
		{"interval below zero", lat.Measure(5, 3, "").WithInterval(-1, 9), "outside"},
		{"unknown unit", Def{Name: "x", Unit: "furlongs", Direction: Lower}.Measure(1, 1, ""), "not one of the known units"},
		{"no direction", Def{Name: "x", Unit: Ms}.Measure(1, 1, ""), "direction"},
		{"unknown state", Metric{Name: "x", Unit: Ms, Direction: Lower, State: "maybe"}, "unknown state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Check()
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Check(%+v) = %v, want %q", tt.m, err, tt.want)
			}
		})
	}
}

// TestMetricJSON: only a measured metric carries a value; an open end of
// an interval is null; a round trip keeps the metric.
func TestMetricJSON(t *testing.T) {
	tests := []struct {
		name string
		m    Metric
		want string
	}{
		{"measured", lat.Measure(12.5, 3, "").WithInterval(10, 15),
			`{"name":"ttft_p99_ms","value":12.5,"unit":"ms","direction":"lower","state":"measured","interval":[10,15],"n":3}`},
		{"never", rec.Never("never recovered"),
			`{"name":"recovery_s","value":null,"unit":"s","direction":"lower","state":"never","reason":"never recovered"}`},
		{"bound open above", lat.Within(1200, math.Inf(1), 20, "2 of 20 failed"),
			`{"name":"ttft_p99_ms","value":null,"unit":"ms","direction":"lower","state":"bound","interval":[1200,null],"n":20,"reason":"2 of 20 failed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.m)
			if err != nil || string(b) != tt.want {
				t.Fatalf("json %s (%v)\nwant %s", b, err, tt.want)
			}
			var back Metric
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(back)
			if string(again) != tt.want {
				t.Errorf("round trip %s", again)
			}
		})
	}
}

// TestJudge: targets are judged on intervals — met when the whole
// interval clears the bound, missed when it is wholly on the wrong side,
// inconclusive when it straddles (with the sample that would decide).
func TestJudge(t *testing.T) {
	thr := Def{Name: "throughput_ratio", Unit: Ratio, Direction: Higher}
	res := New("answer", rec.Measure(4, 1, ""), frac.Measure(0.95, 100, "").WithInterval(0.89, 0.98), lat.NotMeasurable("no first token"),
		Def{Name: "time_to_violation_s", Unit: Seconds, Direction: Higher}.Never("never violated"),
		Def{Name: "max_rate", Unit: ReqPerS, Direction: Higher}.Within(12, 16, 8, ""),
		thr.Measure(0.977, 40, "").WithInterval(0.833, 1.15))
	tests := []struct {
		name    string
		target  Targets
		outcome Outcome
		because string
	}{
		{"a point below the bound", Targets{"recovery_s": 10}, Met, "recovery_s 4.00 s, target <= 10.0 s"},
		{"a point above it", Targets{"recovery_s": 3}, Missed, "target <= 3.00 s"},
		{"the interval wholly below", Targets{"slo_attainment": 0.99}, Missed, "target >= 99.0 %"},
		{"the interval wholly above", Targets{"slo_attainment": 0.85}, Met, "target >= 85.0 %"},
		{"the interval straddles", Targets{"slo_attainment": 0.9}, Inconclusive, "about 144 samples instead of 100 would decide it"},
		{"Q5's 0.977 (0.833–1.15) against ≥ 0.9", Targets{"throughput_ratio": 0.9}, Inconclusive, "inconclusive, the interval straddles the target"},
		{"not measurable fails closed", Targets{"ttft_p99_ms": 500}, Missed, "not measurable, so not verified"},
		{"never violated is +∞", Targets{"time_to_violation_s": 60}, Met, "never"},
		{"a bracket above", Targets{"max_rate": 12}, Met, "12.0–16.0 req/s"},
		{"a bracket straddling", Targets{"max_rate": 14}, Inconclusive, "12.0–16.0 req/s"},
		{"a bracket below", Targets{"max_rate": 17}, Missed, "12.0–16.0 req/s"},
		{"no such metric", Targets{"nope": 1}, Missed, "no metric nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(res, tt.target)
			if len(v) != 1 || v[0].Outcome != tt.outcome || v[0].Met != (tt.outcome == Met) || !strings.Contains(v[0].Reason, tt.because) {
				t.Errorf("Judge(%v) = %+v, want %s because %q", tt.target, v, tt.outcome, tt.because)
			}
		})
	}
	res.Targets = Judge(res, Targets{"recovery_s": 10, "recovery_s_": 1})
	if !res.Missed() || res.Inconclusive() {
		t.Error("a missed target is not Missed")
	}
	res.Targets = Judge(res, Targets{"recovery_s": 10, "max_rate": 14})
	if res.Missed() || !res.Inconclusive() {
		t.Error("a straddling target is not Inconclusive")
	}
}

func TestResultCheck(t *testing.T) {
	good := New("it recovered", rec.Measure(4, 1, ""), frac.Measure(0.9, 10, ""))
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.Answer = ""
	bad.Metrics = append(bad.Metrics, frac.Measure(2, 1, ""))
	err := bad.Check()
	for _, want := range []string{"without an answer", "appears twice", "outside [0, 1]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check() = %v, want it to say %q", err, want)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		m    Metric
		want string
	}{
		{lat.Measure(2208.4, 10, ""), "2,208 ms"},
		{lat.Measure(123.4, 10, ""), "123 ms"},
		{lat.Measure(12.34, 10, ""), "12.3 ms"},
		{lat.Measure(0.0421, 10, ""), "0.0421 ms"},
		{frac.Measure(0.8333, 10, ""), "83.3 %"},
		{frac.Measure(0.9995, 10, ""), "99.95 %"},
		{Def{Name: "r", Unit: Ratio, Direction: Lower}.Measure(13.2, 10, ""), "13.2×"},
		{rec.Measure(2.25, 1, "").WithResolution(0.25), "2.25 s ± 0.250 s"},
		{lat.Measure(100, 5, "").WithInterval(90, 110), "100 ms (95 % CI 90.0–110)"},
		{lat.Within(1200, math.Inf(1), 3, ""), "≥ 1,200 ms"},
		{Def{Name: "max_rate", Unit: ReqPerS, Direction: Higher}.Within(12, 16, 8, ""), "12.0–16.0 req/s"},
		{rec.Never("never recovered by the end"), "never (never recovered by the end)"},
		{lat.NotMeasurable("the target reports no engine IDs"), "not measurable (the target reports no engine IDs)"},
		{Def{Name: "n", Unit: Count, Direction: Lower}.Measure(12345, 1, ""), "12,345"},
	}
	for _, tt := range tests {
		if got := Format(tt.m); got != tt.want {
			t.Errorf("Format(%+v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}
