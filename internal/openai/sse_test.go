package openai

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type sseCase struct {
	name   string
	in     string
	want   []Event
	endErr error
}

var sseCases = []sseCase{
	{"lf", "data: a\n\ndata: b\n\n", []Event{{Data: []byte("a")}, {Data: []byte("b")}}, io.EOF},
	{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []Event{{Data: []byte("a")}, {Data: []byte("b")}}, io.EOF},
	{"cr", "data: a\r\rdata: b\r\r", []Event{{Data: []byte("a")}, {Data: []byte("b")}}, io.EOF},
	{"mixed endings", "data: a\r\n\ndata: b\r\r\n", []Event{{Data: []byte("a")}, {Data: []byte("b")}}, io.EOF},
	{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", []Event{{Data: []byte("a\nb\n c")}}, io.EOF},
	{"comments and unknown fields", ": ping\nretry: 10\nfoo: bar\ndata: x\n\n:\n\n", []Event{{Data: []byte("x")}}, io.EOF},
	{"event name and id", "event: error\nid: 7\ndata: {}\n\ndata: y\n\n", []Event{{Name: "error", ID: "7", Data: []byte("{}")}, {ID: "7", Data: []byte("y")}}, io.EOF},
	{"bom", "\xef\xbb\xbfdata: a\n\n", []Event{{Data: []byte("a")}}, io.EOF},
	{"field without colon", "data\n\n", []Event{{Data: []byte("")}}, io.EOF},
	{"empty event skipped", "event: x\n\ndata: a\n\n", []Event{{Data: []byte("a")}}, io.EOF},
	{"no blank line at end", "data: [DONE]\n", []Event{{Data: []byte("[DONE]")}}, io.EOF},
	{"cut mid-line", "data: a\n\ndata: {\"cho", []Event{{Data: []byte("a")}}, io.ErrUnexpectedEOF},
	{"empty", "", nil, io.EOF},
	{"only comments", ": a\n: b\n", nil, io.EOF},
}

// chunkReader returns its chunks one per Read.
type chunkReader struct{ chunks [][]byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	if len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func readAll(t *testing.T, r *SSEReader) ([]Event, error) {
	t.Helper()
	var evs []Event
	for range 10000 {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		ev.Data = bytes.Clone(ev.Data)
		evs = append(evs, ev)
	}
	t.Fatal("reader did not end")
	return nil, nil
}

func checkEvents(t *testing.T, tc sseCase, got []Event, err error) {
	t.Helper()
	if !errors.Is(err, tc.endErr) {
		t.Fatalf("end error = %v, want %v", err, tc.endErr)
	}
	if len(got) != len(tc.want) {
		t.Fatalf("got %d events %q, want %d", len(got), got, len(tc.want))
	}
	for i := range got {
		g, w := got[i], tc.want[i]
		if g.Name != w.Name || g.ID != w.ID || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("event %d = %+v (data %q), want %+v (data %q)", i, g, g.Data, w, w.Data)
		}
	}
}

func TestSSEReader(t *testing.T) {
	for _, tc := range sseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, NewSSEReader(strings.NewReader(tc.in), 0))
			checkEvents(t, tc, got, err)
		})
		t.Run(tc.name+"/one byte reads", func(t *testing.T) {
			got, err := readAll(t, NewSSEReader(iotest.OneByteReader(strings.NewReader(tc.in)), 0))
			checkEvents(t, tc, got, err)
		})
		t.Run(tc.name+"/every split", func(t *testing.T) {
			for i := range len(tc.in) {
				r := &chunkReader{chunks: [][]byte{[]byte(tc.in[:i]), []byte(tc.in[i:])}}
				got, err := readAll(t, NewSSEReader(r, 0))
				checkEvents(t, tc, got, err)
			}
		})
	}
}

func TestSSEReaderLineLimit(t *testing.T) {
	long := "data: " + strings.Repeat("x", 100) + "\n\n"
	tests := []struct {
		name    string
		maxLine int
		want    error
	}{
		{"fits", 106, io.EOF},
		{"one over", 105, ErrLineTooLong},
		{"far over", 10, ErrLineTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewSSEReader(iotest.HalfReader(strings.NewReader(long+long)), tc.maxLine)
			_, err := readAll(t, r)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if _, err2 := r.Next(); !errors.Is(err2, err) {
				t.Fatalf("error not sticky: %v then %v", err, err2)
			}
		})
	}
}

func TestSSEReaderUnterminatedHugeLine(t *testing.T) {
	r := NewSSEReader(io.LimitReader(neverEnding('x'), 10<<20), 1<<16)
	if _, err := r.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

func TestSSEReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewSSEReader(io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom)), 0)
	if ev, err := r.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event = %q, %v", ev.Data, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func FuzzSSE(f *testing.F) {
	for _, tc := range sseCases {
		f.Add([]byte(tc.in), uint8(3))
	}
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n"), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, split uint8) {
		// The same bytes fed whole and in small pieces give the same events.
		whole, errWhole := collect(NewSSEReader(bytes.NewReader(in), 64))
		var chunks [][]byte
		step := int(split%16) + 1
		for i := 0; i < len(in); i += step {
			chunks = append(chunks, in[i:min(i+step, len(in))])
		}
		pieces, errPieces := collect(NewSSEReader(&chunkReader{chunks: chunks}, 64))
		if !errors.Is(errPieces, errWhole) && !(errors.Is(errWhole, ErrLineTooLong) || errors.Is(errPieces, ErrLineTooLong)) {
			t.Fatalf("end differs: whole %v, pieces %v", errWhole, errPieces)
		}
		if errors.Is(errWhole, ErrLineTooLong) || errors.Is(errPieces, ErrLineTooLong) {
			return // a long line may be detected at different points
		}
		if len(whole) != len(pieces) {
			t.Fatalf("whole gave %d events, pieces %d", len(whole), len(pieces))
		}
		for i := range whole {
			if whole[i].Name != pieces[i].Name || whole[i].ID != pieces[i].ID || !bytes.Equal(whole[i].Data, pieces[i].Data) {
				t.Fatalf("event %d differs: %+v vs %+v", i, whole[i], pieces[i])
			}
		}
	})
}

func collect(r *SSEReader) ([]Event, error) {
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		ev.Data = bytes.Clone(ev.Data)
		evs = append(evs, ev)
	}
}
