package dataflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// wireVersion is the first byte of every encoded record.
const wireVersion = 1

// ErrWire is wrapped by every error DecodeRecord returns.
var ErrWire = errors.New("runtime: malformed record")

// AppendRecord appends the wire encoding of r to dst and returns the
// extended slice. The format (version byte, then length-prefixed fields and
// varint Unix-nanosecond times, the zero time as 0) is what a record looks
// like between processes; the in-process engine uses it at stage boundaries
// in serialising mode.
func AppendRecord(dst []byte, r Record) []byte {
	dst = append(dst, wireVersion)
	dst = appendString(dst, r.ID)
	dst = binary.AppendUvarint(dst, uint64(len(r.Payload)))
	dst = append(dst, r.Payload...)
	dst = appendString(dst, r.Meta.Trace)
	dst = appendString(dst, r.Meta.Tenant)
	dst = appendTime(dst, r.Meta.Intended)
	dst = appendTime(dst, r.Meta.Deadline)
	dst = binary.AppendUvarint(dst, uint64(max(r.Delivery, 0)))
	dst = binary.AppendUvarint(dst, uint64(len(r.Hops)))
	for _, h := range r.Hops {
		dst = appendString(dst, h.Stage)
		dst = appendTime(dst, h.Enqueued)
		dst = appendTime(dst, h.Started)
		dst = appendTime(dst, h.Ended)
	}
	if r.Err == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	for _, s := range []string{r.Err.Stage, r.Err.Operator, string(r.Err.Kind), r.Err.Message} {
		dst = appendString(dst, s)
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendTime(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(dst, 0)
	}
	return binary.AppendVarint(dst, t.UnixNano())
}

// DecodeRecord decodes one record encoded by AppendRecord. The result
// shares no memory with b. Any malformed input yields an error wrapping
// ErrWire; DecodeRecord never panics.
func DecodeRecord(b []byte) (Record, error) {
	d := decoder{b: b}
	if v := d.byte(); d.err == nil && v != wireVersion {
		return Record{}, fmt.Errorf("%w: version %d, want %d", ErrWire, v, wireVersion)
	}
	var r Record
	r.ID = d.string()
	if p := d.bytes(); len(p) > 0 {
		r.Payload = append([]byte(nil), p...)
	}
	r.Meta.Trace = d.string()
	r.Meta.Tenant = d.string()
	r.Meta.Intended = d.time()
	r.Meta.Deadline = d.time()
	r.Delivery = int(d.uvarint(1 << 31))
	// A hop takes at least 4 bytes, which bounds the allocation.
	if n := d.uvarint(uint64(len(d.b)) / 4); n > 0 {
		r.Hops = make([]Hop, n)
		for i := range r.Hops {
			r.Hops[i] = Hop{Stage: d.string(), Enqueued: d.time(), Started: d.time(), Ended: d.time()}
		}
	}
	switch d.byte() {
	case 0:
	case 1:
		r.Err = &StageError{Stage: d.string(), Operator: d.string(), Kind: ErrorKind(d.string()), Message: d.string()}
	default:
		d.fail("error flag")
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d trailing bytes", len(d.b)))
	}
	if d.err != nil {
		return Record{}, d.err
	}
	return r, nil
}

// decoder reads fields and records the first error; after an error every
// read returns a zero value.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", ErrWire, what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("length: input truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint(limit uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > limit {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint(uint64(len(d.b)))
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail("field length")
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) time() time.Time {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("time")
		return time.Time{}
	}
	d.b = d.b[n:]
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, v)
}
