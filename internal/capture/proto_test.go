package capture

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

var protoType = string(expfmt.NewFormat(expfmt.TypeProtoDelim))

// TestParseProtobuf: a delimited protobuf exposition (what an exporter
// answers to our Accept header first) parses as its text form would.
func TestParseProtobuf(t *testing.T) {
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, f := range []*dto.MetricFamily{
		{Name: proto.String("vllm:num_requests_running"), Type: dto.MetricType_GAUGE.Enum(),
			Metric: []*dto.Metric{{Label: []*dto.LabelPair{{Name: proto.String("model"), Value: proto.String("m")}}, Gauge: &dto.Gauge{Value: proto.Float64(3)}}}},
		{Name: proto.String("ttft_seconds"), Type: dto.MetricType_HISTOGRAM.Enum(),
			Metric: []*dto.Metric{{Histogram: &dto.Histogram{SampleCount: proto.Uint64(4), SampleSum: proto.Float64(1.5),
				Bucket: []*dto.Bucket{{UpperBound: proto.Float64(0.5), CumulativeCount: proto.Uint64(3)}}}}}},
	} {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	series, err := Parse(&buf, protoType, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 2 || series[1].Name != "vllm:num_requests_running" || series[1].Value != 3 || series[0].Count != 4 {
		t.Fatalf("series %+v", series)
	}
}

// TestParseProtobufHostile: a length prefix of 2^62 (expfmt's decoder
// allocated it and panicked) and a message of millions of empty metrics
// (2 bytes each, gigabytes decoded) are errors before anything is
// allocated for them.
func TestParseProtobufHostile(t *testing.T) {
	empties := protowire.AppendVarint(nil, 0)
	var family []byte
	for range 200_000 {
		family = protowire.AppendTag(family, fieldFamilyMetric, protowire.BytesType)
		family = append(family, empties...)
	}
	many := protowire.AppendVarint(nil, uint64(len(family)))
	many = append(many, family...)
	var spans []byte // one histogram of 200,000 empty native-histogram spans
	for range 200_000 {
		spans = protowire.AppendTag(spans, 12, protowire.BytesType)
		spans = append(spans, empties...)
	}
	metric := protowire.AppendBytes(protowire.AppendTag(nil, fieldMetricHistogram, protowire.BytesType), spans)
	fam := protowire.AppendBytes(protowire.AppendTag(nil, fieldFamilyMetric, protowire.BytesType), metric)
	spanny := append(protowire.AppendVarint(nil, uint64(len(fam))), fam...)
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"a length of 2^62", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f}, "bytes in one protobuf message"},
		{"200,000 empty metrics", many, "samples"},
		{"a histogram of 200,000 empty spans", spanny, "samples"},
		{"a message cut short", []byte{0x10, 0x0a}, "cut short"},
		{"a bad name", append(protowire.AppendVarint(nil, 5), protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "a b")...), "invalid metric name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(bytes.NewReader(tc.body), protoType, "test")
			var le *LimitError
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.want == "samples" && !errors.As(err, &le)) {
				t.Fatalf("Parse: %v; want an error with %q", err, tc.want)
			}
		})
	}
}
