package capture

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sagebench/sagebench/internal/redact"
)

// Metric types of a Series.
const (
	TypeCounter   = "counter"
	TypeGauge     = "gauge"
	TypeHistogram = "histogram"
	TypeSummary   = "summary"
	TypeUntyped   = "untyped"
)

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64 `json:"le"`
	Count      float64 `json:"count"`
}

// Series is one labelled metric at one scrape. Value holds a counter's,
// gauge's or untyped metric's value; histograms and summaries carry Count
// and Sum (and Buckets for histograms).
type Series struct {
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels,omitempty"`
	Type    string            `json:"type"`
	Value   float64           `json:"value,omitempty"`
	Count   float64           `json:"count,omitempty"`
	Sum     float64           `json:"sum,omitempty"`
	Buckets []Bucket          `json:"buckets,omitempty"`
}

// Key identifies the series: name{k="v",…} with labels sorted.
func (s Series) Key() string { return SeriesKey(s.Name, s.Labels) }

// SeriesKey renders name{k="v",…} with the labels sorted by name.
func SeriesKey(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(strconv.Quote(labels[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// ParseError is exposition text that could not be parsed; it names the
// source (URL or file) and, where the parser knows it, the line.
type ParseError struct {
	Source string
	Line   int
	Err    error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %v", e.Source, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Source, e.Err)
}
func (e *ParseError) Unwrap() error { return e.Err }

// Parse reads exposition text from r. contentType is the response's
// Content-Type header: OpenMetrics and protobuf use expfmt's decoder, all
// else the classic text parser (built with expfmt.NewTextParser; its zero
// value is invalid). source names the input in errors.
func Parse(r io.Reader, contentType, source string) ([]Series, error) {
	return parseLimited(r, contentType, source, DefaultMaxSamples)
}

// parseLimited is Parse with a protobuf exposition's elements bounded by
// maxSamples (the text formats are bounded line by line as they are read).
func parseLimited(r io.Reader, contentType, source string, maxSamples int) ([]Series, error) {
	fams, err := decodeFamilies(r, contentType, maxSamples)
	if err != nil {
		return nil, parseError(source, err)
	}
	var out []Series
	for _, f := range fams {
		if err := checkBuckets(f, source); err != nil {
			return nil, err
		}
		out = append(out, flatten(f)...)
	}
	return sortByKey(out), nil
}

// sortByKey sorts series by Key, each key built once (building them in
// every comparison made the sort 60 % of a large scrape's parse).
func sortByKey(in []Series) []Series {
	type keyed struct {
		key string
		s   Series
	}
	ks := make([]keyed, len(in))
	for i, s := range in {
		ks[i] = keyed{s.Key(), s}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].key < ks[j].key })
	for i := range ks {
		in[i] = ks[i].s
	}
	return in
}

func parseError(source string, err error) error {
	if oe := (*omError)(nil); errors.As(err, &oe) {
		return &ParseError{Source: source, Line: oe.Line, Err: errors.New(oe.Msg)}
	}
	var pe expfmt.ParseError
	if errors.As(err, &pe) {
		return &ParseError{Source: source, Line: pe.Line, Err: errors.New(pe.Msg)}
	}
	return &ParseError{Source: source, Err: err}
}

func decodeFamilies(r io.Reader, contentType string, maxSamples int) ([]*dto.MetricFamily, error) {
	format := expfmt.Format(contentType)
	text := contentType == "" || format.FormatType() == expfmt.TypeTextPlain || format.FormatType() == expfmt.TypeUnknown
	if format.FormatType() == expfmt.TypeOpenMetrics { // linear, see omText
		r, text = newOMText(r), true
	}
	if text {
		p := expfmt.NewTextParser(model.UTF8Validation)
		m, err := p.TextToMetricFamilies(r)
		if err != nil {
			return nil, err
		}
		fams := make([]*dto.MetricFamily, 0, len(m))
		for _, f := range m {
			fams = append(fams, f)
		}
		return fams, nil
	}
	if format.FormatType() == expfmt.TypeProtoDelim {
		return decodeProto(r, format, maxSamples)
	}
	return nil, fmt.Errorf("exposition format %q is not supported", redact.Clip(contentType, 128))
}

// MaxBuckets bounds the buckets of one histogram series: every window
// keeps and sorts them, and no exporter's classic histogram needs more
// (a 10,001-bucket one is an attack or a bug). A scrape holding a
// larger one fails as a whole (*LimitError).
const MaxBuckets = 1000

func checkBuckets(f *dto.MetricFamily, source string) error {
	for _, m := range f.GetMetric() {
		if len(m.GetHistogram().GetBucket()) > MaxBuckets {
			return &LimitError{Source: source, What: "buckets in one histogram", Limit: MaxBuckets}
		}
	}
	return nil
}

// flatten turns one family into Series, one per labelled metric.
func flatten(f *dto.MetricFamily) []Series {
	out := make([]Series, 0, len(f.GetMetric()))
	for _, m := range f.GetMetric() {
		s := Series{Name: f.GetName(), Labels: labelMap(m.GetLabel())}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			s.Type, s.Value = TypeCounter, m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			s.Type, s.Value = TypeGauge, m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			s.Type, s.Count, s.Sum = TypeHistogram, float64(h.GetSampleCount()), h.GetSampleSum()
			if h.SampleCountFloat != nil {
				s.Count = h.GetSampleCountFloat()
			}
			s.Buckets = buckets(h)
		case dto.MetricType_SUMMARY:
			sm := m.GetSummary()
			s.Type, s.Count, s.Sum = TypeSummary, float64(sm.GetSampleCount()), sm.GetSampleSum()
		default:
			s.Type, s.Value = TypeUntyped, m.GetUntyped().GetValue()
		}
		out = append(out, s)
	}
	return out
}

// buckets returns the cumulative buckets sorted by bound, ending with +Inf
// (holding the sample count) as histogram_quantile expects.
func buckets(h *dto.Histogram) []Bucket {
	var bs []Bucket
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		bs = append(bs, Bucket{UpperBound: b.GetUpperBound(), Count: c})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound })
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		n := float64(h.GetSampleCount())
		if h.SampleCountFloat != nil {
			n = h.GetSampleCountFloat()
		}
		bs = append(bs, Bucket{UpperBound: math.Inf(1), Count: n})
	}
	return bs
}

func labelMap(ls []*dto.LabelPair) map[string]string {
	if len(ls) == 0 {
		return nil
	}
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.GetName()] = l.GetValue()
	}
	return m
}

// MarshalJSON writes the bound as a string ("+Inf" included), which JSON
// numbers cannot hold.
func (b Bucket) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"le":%q,"count":%s}`, formatFloat(b.UpperBound), formatFloat(b.Count)), nil
}

func formatFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
