package rag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Txn is the payload of one RAG transaction as it moves through the
// stages; each stage fills in its part and appends its Call.
type Txn struct {
	Seq      int       // position in the run's schedule
	Query    string    // the question
	QueryDoc int       // the corpus document the question was drawn from (-1: unknown)
	TopK     int       // documents to retrieve (0: the operator's default)
	Vector   []float32 // the query's embedding (after embed)
	Hits     []Hit     // retrieved documents, best first (after retrieve)
	Calls    []Call    // one per stage done, in order
}

// Hit is one retrieved document.
type Hit struct {
	ID    int
	Score float32
	Text  string
}

// Call is the client-side timing and outcome of one stage's request.
// Times are wall-clock readings of the process that made the call.
type Call struct {
	Stage                                   string
	Start, Sent, FirstByte, FirstToken, End time.Time
	Tokens                                  []time.Time // streamed content deltas (generate)
	Status                                  int
	Engine                                  string
	Retries                                 int
	PromptTokens, CompletionTokens          int
}

// Call returns the call of stage, if the transaction has one.
func (t *Txn) Call(stage string) (Call, bool) {
	for _, c := range t.Calls {
		if c.Stage == stage {
			return c, true
		}
	}
	return Call{}, false
}

// setCall records c, replacing an earlier call of the same stage (a
// redelivered input is processed again from the same payload).
func (t *Txn) setCall(c Call) {
	for i := range t.Calls {
		if t.Calls[i].Stage == c.Stage {
			t.Calls[i] = c
			return
		}
	}
	t.Calls = append(t.Calls, c)
}

// wireVersion is the first byte of an encoded Txn.
const wireVersion = 1

// Limits a decoder enforces, so a hostile payload cannot make it allocate
// without bound.
const (
	maxVector = 1 << 16
	maxHits   = 1 << 14
	maxCalls  = 64
	maxTokens = 1 << 20
)

// ErrPayload is wrapped by every error DecodeTxn returns.
var ErrPayload = errors.New("rag: malformed transaction payload")

// AppendTxn appends the binary encoding of t to dst: a version byte, then
// varints, length-prefixed strings, little-endian float32s and times as
// varint Unix nanoseconds (the zero time as 0).
func AppendTxn(dst []byte, t *Txn) []byte {
	dst = append(dst, wireVersion)
	dst = binary.AppendVarint(dst, int64(t.Seq))
	dst = appendString(dst, t.Query)
	dst = binary.AppendVarint(dst, int64(t.QueryDoc))
	dst = binary.AppendVarint(dst, int64(t.TopK))
	dst = binary.AppendUvarint(dst, uint64(len(t.Vector)))
	for _, f := range t.Vector {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Hits)))
	for _, h := range t.Hits {
		dst = binary.AppendVarint(dst, int64(h.ID))
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(h.Score))
		dst = appendString(dst, h.Text)
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Calls)))
	for i := range t.Calls {
		dst = appendCall(dst, &t.Calls[i])
	}
	return dst
}

func appendCall(dst []byte, c *Call) []byte {
	dst = appendString(dst, c.Stage)
	for _, tm := range []time.Time{c.Start, c.Sent, c.FirstByte, c.FirstToken, c.End} {
		dst = appendTime(dst, tm)
	}
	dst = binary.AppendUvarint(dst, uint64(len(c.Tokens)))
	for _, tm := range c.Tokens {
		dst = appendTime(dst, tm)
	}
	for _, v := range []int{c.Status, c.Retries, c.PromptTokens, c.CompletionTokens} {
		dst = binary.AppendVarint(dst, int64(v))
	}
	return appendString(dst, c.Engine)
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

// DecodeTxn decodes a payload written by AppendTxn. The result shares no
// memory with b. Malformed input yields an error wrapping ErrPayload;
// DecodeTxn never panics.
func DecodeTxn(b []byte) (*Txn, error) {
	d := decoder{b: b}
	if v := d.byte(); d.err == nil && v != wireVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrPayload, v, wireVersion)
	}
	t := &Txn{Seq: d.int(), Query: d.string(), QueryDoc: d.int(), TopK: d.int()}
	if n := d.count(maxVector, 4); n > 0 {
		t.Vector = make([]float32, n)
		for i := range t.Vector {
			t.Vector[i] = d.float()
		}
	}
	if n := d.count(maxHits, 6); n > 0 {
		t.Hits = make([]Hit, n)
		for i := range t.Hits {
			t.Hits[i] = Hit{ID: d.int(), Score: d.float(), Text: d.string()}
		}
	}
	if n := d.count(maxCalls, 12); n > 0 {
		t.Calls = make([]Call, n)
		for i := range t.Calls {
			t.Calls[i] = d.call()
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return t, nil
}

// decoder reads AppendTxn's format; the first error sticks and later reads
// return zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrPayload, fmt.Sprintf(format, args...))
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("integer %d out of range", v)
		return 0
	}
	return int(v)
}

// count reads a length of at most limit items of at least minSize bytes
// each (so the length cannot exceed what the buffer can hold).
func (d *decoder) count(limit, minSize int) int {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad length")
		return 0
	}
	d.b = d.b[n:]
	if v > uint64(limit) || v*uint64(minSize) > uint64(len(d.b)) {
		d.fail("length %d too large", v)
		return 0
	}
	return int(v)
}

func (d *decoder) string() string {
	n := d.count(len(d.b), 1)
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) float() float32 {
	if len(d.b) < 4 {
		d.fail("truncated float")
		return 0
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(d.b))
	d.b = d.b[4:]
	return v
}

func (d *decoder) time() time.Time {
	ns := d.varint()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func (d *decoder) call() Call {
	c := Call{Stage: d.string(), Start: d.time(), Sent: d.time(), FirstByte: d.time(), FirstToken: d.time(), End: d.time()}
	if n := d.count(maxTokens, 1); n > 0 {
		c.Tokens = make([]time.Time, n)
		for i := range c.Tokens {
			c.Tokens[i] = d.time()
		}
	}
	c.Status, c.Retries, c.PromptTokens, c.CompletionTokens = d.int(), d.int(), d.int(), d.int()
	c.Engine = d.string()
	return c
}
