package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/sagebench/sagebench/internal/redact"
)

// maxProtoMessage bounds one delimited MetricFamily of a protobuf
// exposition. expfmt's decoder reads with no bound (protodelim MaxSize
// −1): it allocates whatever length prefix the exporter sends, and 2^62
// panicked the harness.
const maxProtoMessage = 16 << 20

// decodeProto reads a delimited protobuf exposition: each message at most
// maxProtoMessage bytes, its repeated elements (metrics, their labels,
// buckets and quantiles) counted from the wire bytes before any is
// decoded, at most maxElems in all (empty metrics are 2 bytes each: a
// 16 MiB body of them would decode to gigabytes), and metric and label
// names checked as expfmt checks them.
func decodeProto(r io.Reader, format expfmt.Format, maxElems int) ([]*dto.MetricFamily, error) {
	scheme := model.LegacyValidation
	if format.ToEscapingScheme() == model.NoEscaping {
		scheme = model.UTF8Validation
	}
	br := bufio.NewReader(r)
	var fams []*dto.MetricFamily
	elems := 0
	for {
		msg, err := nextMessage(br)
		if err == io.EOF {
			return fams, nil
		}
		if err != nil {
			return nil, err
		}
		n, err := familyElements(msg)
		if err != nil {
			return nil, fmt.Errorf("protobuf exposition: %w", err)
		}
		if elems += n; elems > maxElems {
			return nil, &LimitError{What: "samples", Limit: int64(maxElems)}
		}
		f := &dto.MetricFamily{}
		if err := proto.Unmarshal(msg, f); err != nil {
			return nil, fmt.Errorf("protobuf exposition: %w", err)
		}
		if err := validFamily(f, scheme); err != nil {
			return nil, err
		}
		fams = append(fams, f)
	}
}

// nextMessage reads one length-delimited message (io.EOF at a clean end).
func nextMessage(br *bufio.Reader) ([]byte, error) {
	size, err := binary.ReadUvarint(br)
	switch {
	case err == io.EOF:
		return nil, io.EOF
	case err != nil:
		return nil, fmt.Errorf("protobuf exposition: reading a length: %w", err)
	case size > maxProtoMessage:
		return nil, &LimitError{What: "bytes in one protobuf message", Limit: maxProtoMessage}
	}
	msg := make([]byte, size)
	if _, err := io.ReadFull(br, msg); err != nil {
		return nil, fmt.Errorf("protobuf exposition: a message cut short: %w", err)
	}
	return msg, nil
}

// Field numbers of io.prometheus.client's messages whose repeated
// elements familyElements counts.
const (
	fieldFamilyMetric    = 4 // MetricFamily.metric
	fieldMetricLabel     = 1 // Metric.label
	fieldMetricSummary   = 4 // Metric.summary
	fieldMetricHistogram = 7 // Metric.histogram
)

// familyElements counts a MetricFamily's metrics and, within each, its
// labels and its summary's or histogram's elements.
func familyElements(b []byte) (int, error) {
	return countFields(b, func(num protowire.Number, v []byte) (int, error) {
		if num != fieldFamilyMetric {
			return 0, nil
		}
		n, err := countFields(v, func(num protowire.Number, v []byte) (int, error) {
			switch num {
			case fieldMetricLabel:
				return 1, nil
			case fieldMetricSummary, fieldMetricHistogram:
				return countAll(v) // quantiles; buckets, native spans, exemplars
			}
			return 0, nil
		})
		return 1 + n, err
	})
}

// countAll counts the length-delimited fields of message b: each is an
// element decoding allocates (a bucket, a span, an exemplar, a packed
// array).
func countAll(b []byte) (int, error) {
	return countFields(b, func(protowire.Number, []byte) (int, error) { return 1, nil })
}

// countFields walks message b's fields and sums each length-delimited
// one's count (other fields count 0).
func countFields(b []byte, each func(protowire.Number, []byte) (int, error)) (int, error) {
	total := 0
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return 0, protowire.ParseError(l)
		}
		b = b[l:]
		if typ != protowire.BytesType {
			if l = protowire.ConsumeFieldValue(num, typ, b); l < 0 {
				return 0, protowire.ParseError(l)
			}
			b = b[l:]
			continue
		}
		v, l := protowire.ConsumeBytes(b)
		if l < 0 {
			return 0, protowire.ParseError(l)
		}
		b = b[l:]
		n, err := each(num, v)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// validFamily checks names and label values as expfmt's decoder does.
func validFamily(f *dto.MetricFamily, scheme model.ValidationScheme) error {
	if !scheme.IsValidMetricName(f.GetName()) {
		return fmt.Errorf("invalid metric name %q", redact.Clip(f.GetName(), 64))
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l == nil {
				continue
			}
			if !model.LabelValue(l.GetValue()).IsValid() {
				return errors.New("invalid label value (not UTF-8)")
			}
			if !scheme.IsValidLabelName(l.GetName()) {
				return fmt.Errorf("invalid label name %q", redact.Clip(l.GetName(), 64))
			}
		}
	}
	return nil
}
