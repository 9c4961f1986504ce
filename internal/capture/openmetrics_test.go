package capture

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const omType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// omHistogram is an OpenMetrics histogram of n buckets, le="0.001" up to
// le=n/1000, each with a timestamp and the first with an exemplar.
func omHistogram(n int) string {
	var b strings.Builder
	b.WriteString("# HELP rpc_seconds RPC latency.\n# TYPE rpc_seconds histogram\n# UNIT rpc_seconds seconds\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "rpc_seconds_bucket{le=\"%g\"} %d", float64(i)/1000, i)
		if i == 1 {
			b.WriteString(` # {trace_id="a}b#c"} 0.0005 1520879607.789`)
		}
		b.WriteString(" 1520879607.789\n")
	}
	fmt.Fprintf(&b, "rpc_seconds_bucket{le=\"+Inf\"} %d\nrpc_seconds_count %d\nrpc_seconds_sum 12.5\nrpc_seconds_created 1520430000.123\n# EOF\n", n, n)
	return b.String()
}

// TestOpenMetricsLikeText: the OpenMetrics path gives the series the
// text format gives for the same metrics (counters by their _total
// name, _created dropped, timestamps and exemplars cut off,
// gaugehistogram/stateset/info/unknown mapped), and its errors name the
// input line.
func TestOpenMetricsLikeText(t *testing.T) {
	om := `# TYPE jobs counter
# HELP jobs Jobs done.
jobs_total{kind="a"} 5 1520879607.789 # {trace_id="x"} 1
jobs_created{kind="a"} 1520430000
# TYPE q gaugehistogram
q_bucket{le="1"} 2
q_bucket{le="+Inf"} 3
q_gcount 3
q_gsum 4.5
# TYPE sw stateset
sw{sw="on"} 1
# TYPE build info
build_info{version="1.2"} 1
# TYPE odd unknown
odd{v="}#\"{"} 7
# TYPE lat summary
lat{quantile="0.5"} 0.1
lat_count 4
lat_sum 0.5
lat_created 1520430000
# EOF
`
	text := `# TYPE jobs_total counter
jobs_total{kind="a"} 5
# TYPE q histogram
q_bucket{le="1"} 2
q_bucket{le="+Inf"} 3
q_count 3
q_sum 4.5
# TYPE sw gauge
sw{sw="on"} 1
# TYPE build_info gauge
build_info{version="1.2"} 1
# TYPE odd untyped
odd{v="}#\"{"} 7
# TYPE lat summary
lat{quantile="0.5"} 0.1
lat_count 4
lat_sum 0.5
`
	got, err := Parse(strings.NewReader(om), omType, "om")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(strings.NewReader(text), "text/plain", "text")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OpenMetrics\n%+v\nwant (text)\n%+v", got, want)
	}
	h, err := Parse(strings.NewReader(omHistogram(100)), omType, "om")
	if err != nil || len(h) != 1 || len(h[0].Buckets) != 101 || h[0].Count != 100 || h[0].Sum != 12.5 {
		t.Errorf("a 100-bucket histogram: %v %+v", err, h)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"no # EOF", "# TYPE a gauge\na 1\n", "line 3: an OpenMetrics exposition must end with # EOF"},
		{"data after # EOF", "a 1\n# EOF\nb 2\n", "line 3: data after # EOF"},
		{"bad value, line kept", "# TYPE a gauge\n# HELP a x\na{b=\"c\"} one\n# EOF\n", "om: line 3:"},
	} {
		_, err := Parse(strings.NewReader(tc.in), omType, "om")
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *ParseError with %q", tc.name, err, tc.want)
		}
	}
}

// TestHistogramBucketsBounded (issue 41, hole 6): the 10,001-bucket
// OpenMetrics histogram that made every scrape time out (37.9 s of CPU
// for a 5 s capture, expfmt's per-line ABNF parser) is refused as a
// *LimitError naming the bound, after a linear parse; 1,000 buckets are
// kept. The parse time is BenchmarkParseOpenMetrics's, not asserted here.
func TestHistogramBucketsBounded(t *testing.T) {
	_, err := Parse(strings.NewReader(omHistogram(10_000)), omType, "http://exp/metrics")
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != MaxBuckets || !strings.Contains(err.Error(), "buckets in one histogram") {
		t.Errorf("10,001 buckets: %v, want a *LimitError over %d buckets in one histogram", err, MaxBuckets)
	}
	if s, err := Parse(strings.NewReader(omHistogram(MaxBuckets-1)), omType, "x"); err != nil || len(s[0].Buckets) != MaxBuckets {
		t.Errorf("%d buckets: %v", MaxBuckets, err)
	}
}
