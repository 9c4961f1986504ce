package capture

import (
	"errors"
	"os"
	"strings"
	"testing"
)

const textExposition = `# HELP http_requests_total Requests.
# TYPE http_requests_total counter
http_requests_total{code="200",method="get"} 1027
http_requests_total{code="500",method="get"} 3
# TYPE queue_depth gauge
queue_depth 7
# TYPE rpc_seconds histogram
rpc_seconds_bucket{le="0.5"} 8
rpc_seconds_bucket{le="1"} 9
rpc_seconds_bucket{le="+Inf"} 10
rpc_seconds_sum 4.5
rpc_seconds_count 10
# TYPE gc_seconds summary
gc_seconds{quantile="0.5"} 0.01
gc_seconds_sum 1.5
gc_seconds_count 40
mystery 42
`

const openMetricsExposition = `# TYPE jobs counter
# HELP jobs Jobs done.
jobs_total{kind="a"} 5
# TYPE temp gauge
temp 21.5
# EOF
`

func TestParse(t *testing.T) {
	tests := []struct {
		name, contentType, in string
		want                  map[string]Series
	}{
		{"text", "text/plain; version=0.0.4", textExposition, map[string]Series{
			`http_requests_total{code="500",method="get"}`: {Type: TypeCounter, Value: 3},
			`queue_depth`: {Type: TypeGauge, Value: 7},
			`rpc_seconds`: {Type: TypeHistogram, Count: 10, Sum: 4.5},
			`gc_seconds`:  {Type: TypeSummary, Count: 40, Sum: 1.5},
			`mystery`:     {Type: TypeUntyped, Value: 42},
		}},
		{"no content type is text", "", "up 1\n", map[string]Series{"up": {Type: TypeUntyped, Value: 1}}},
		{"openmetrics", "application/openmetrics-text; version=1.0.0; charset=utf-8", openMetricsExposition, map[string]Series{
			`jobs_total{kind="a"}`: {Type: TypeCounter, Value: 5},
			`temp`:                 {Type: TypeGauge, Value: 21.5},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in), tt.contentType, "http://x/metrics")
			if err != nil {
				t.Fatal(err)
			}
			byKey := map[string]Series{}
			for _, s := range got {
				byKey[s.Key()] = s
			}
			for k, w := range tt.want {
				s, ok := byKey[k]
				if !ok || s.Type != w.Type || s.Value != w.Value || s.Count != w.Count || s.Sum != w.Sum {
					t.Errorf("%s = %+v (present %v), want %+v; have keys %v", k, s, ok, w, keys(byKey))
				}
			}
		})
	}
}

func keys(m map[string]Series) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestParseHistogramBuckets(t *testing.T) {
	got, err := Parse(strings.NewReader(textExposition), "", "f")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.Name == "rpc_seconds" {
			if len(s.Buckets) != 3 || s.Buckets[2].Count != 10 || HistogramQuantile(0.5, s.Buckets) != 0.3125 {
				t.Errorf("buckets %+v", s.Buckets)
			}
			return
		}
	}
	t.Fatal("histogram missing")
}

func TestParseErrorNamesSourceAndLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bad value", "ok 1\nbroken{a=\"b\"} notanumber\n", "http://exp/metrics: line 2:"},
		{"unclosed labels", "x{a=\"b\" 1\n", "http://exp/metrics: line 1:"},
		{"type twice", "# TYPE a counter\n# TYPE a gauge\na 1\n", "http://exp/metrics: line 2:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in), "text/plain", "http://exp/metrics")
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Parse error %v, want a *ParseError starting %q", err, tt.want)
			}
		})
	}
	_, err := Parse(strings.NewReader("garbage\n"), "application/openmetrics-text; version=1.0.0", "http://om")
	if err == nil || !strings.Contains(err.Error(), "http://om") {
		t.Errorf("OpenMetrics garbage: %v, want an error naming the source", err)
	}
}

func TestSelector(t *testing.T) {
	series := []Series{
		{Name: "http_requests_total", Labels: map[string]string{"code": "200", "job": "gw"}},
		{Name: "http_requests_total", Labels: map[string]string{"code": "500", "job": "gw"}},
		{Name: "go_goroutines", Labels: map[string]string{"job": "gw"}},
		{Name: "queue_depth"},
	}
	tests := []struct {
		name string
		sel  Selector
		want int
		err  string
	}{
		{"everything", Selector{}, 4, ""},
		{"names anchored", Selector{Names: []string{"http_.*"}}, 2, ""},
		{"partial name does not match", Selector{Names: []string{"http"}}, 0, ""},
		{"equal", Selector{Labels: []string{"code=500"}}, 1, ""},
		{"not equal keeps unlabelled", Selector{Labels: []string{"code!=500"}}, 3, ""},
		{"regex", Selector{Labels: []string{`code=~"2.."`}}, 1, ""},
		{"negative regex", Selector{Names: []string{"http_.*|go_.*"}, Labels: []string{"code!~5.*"}}, 2, ""},
		{"cap", Selector{MaxSeries: 3}, 0, "4 series match, more than the cap of 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.sel.Compile(); err != nil {
				t.Fatal(err)
			}
			got, err := tt.sel.Apply("u", series)
			if tt.err != "" {
				var ce *CardinalityError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err %v, want a *CardinalityError with %q", err, tt.err)
				}
				return
			}
			if err != nil || len(got) != tt.want {
				t.Errorf("kept %d (%v), want %d", len(got), err, tt.want)
			}
		})
	}
}

// FuzzParse feeds arbitrary exposition text to both parsers: they may
// refuse it but must not panic, and an error must name the source.
func FuzzParse(f *testing.F) {
	seed, err := os.ReadFile("testdata/expfmt_text.txt")
	if err != nil {
		f.Fatal(err)
	}
	// The expfmt test exposition, one seed per metric family: small seeds
	// mutate well and minimise fast.
	for i, fam := range strings.Split(string(seed), "\n# HELP ") {
		if i > 0 {
			fam = "# HELP " + fam
		}
		f.Add(fam+"\n", false)
		f.Add(fam+"\n", true)
	}
	for _, s := range []string{textExposition, openMetricsExposition, "", "a{b=\"\\\"\"} 1 2\n", "# TYPE h histogram\nh_bucket{le=\"x\"} 1\n",
		// the OpenMetrics translation (omText): exemplars, timestamps, _created, type mapping, # EOF
		omHistogram(3), "# TYPE q gaugehistogram\nq_bucket{le=\"+Inf\"} 3\nq_gcount 3\nq_gsum 1\n# EOF\n",
		"# TYPE c counter\nc_total{a=\"}#\\\"\"} 1 2 # {t=\"x\"} 1 2\nc_created 1\n# EOF\n", "# TYPE i info\ni_info{v=\"1\"} 1\n# EOF\nx 1\n",
		"# TYPE s stateset\ns{s=\"a\"} 1\n# TYPE u unknown\nu 1\n# EOF"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, openMetrics bool) {
		ct := "text/plain; version=0.0.4"
		if openMetrics {
			ct = "application/openmetrics-text; version=1.0.0"
		}
		series, err := Parse(strings.NewReader(in), ct, "http://fuzz/metrics")
		if err != nil {
			if !strings.Contains(err.Error(), "http://fuzz/metrics") {
				t.Errorf("error %q does not name the source", err)
			}
			return
		}
		for _, s := range series {
			if s.Type == TypeHistogram {
				HistogramQuantile(0.99, s.Buckets)
			}
			_ = s.Key()
		}
	})
}
