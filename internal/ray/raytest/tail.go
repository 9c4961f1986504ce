package raytest

import (
	"bytes"
	"net/http"

	"github.com/coder/websocket"
	"github.com/sagebench/sagebench/internal/ray"
)

// Ray's chunking of the websocket log stream (file_tail_iterator).
const (
	chunkLines = 10
	chunkBytes = 20000
)

// tail is the websocket GET /api/jobs/{id}/logs/tail: the log from its
// start, chunk by chunk as it grows, closed normally once the job has
// ended and all of it was sent.
func (f *Fake) tail(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	j := f.jobs[id]
	f.mu.Unlock()
	switch {
	case j == nil:
		http.Error(w, "Job "+id+" does not exist", http.StatusNotFound)
		return
	case f.NoTail:
		http.NotFound(w, r)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	for pos := 0; ; {
		chunk, ended, wake := f.next(j, pos)
		if len(chunk) == 0 && ended {
			conn.Close(websocket.StatusNormalClosure, "")
			return
		}
		if len(chunk) == 0 {
			select {
			case <-wake:
				continue
			case <-r.Context().Done():
				return
			}
		}
		if f.breaks(pos, &chunk) {
			conn.Write(r.Context(), websocket.MessageText, chunk)
			return // no close frame: the stream breaks
		}
		if conn.Write(r.Context(), websocket.MessageText, chunk) != nil {
			return
		}
		f.mu.Lock()
		f.served["tail"] += int64(len(chunk))
		f.mu.Unlock()
		pos += len(chunk)
	}
}

// next is the chunk of j's log from pos as Ray's file_tail_iterator cuts
// it: lines, each whole however long (never split), until 10 of them or
// more than chunkBytes characters; a partial last line is sent as it is
// (its rest comes later as a line of its own). ended says the job has
// ended; wake is closed when the log or the status changes.
func (f *Fake) next(j *job, pos int) (chunk []byte, ended bool, wake <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rest := j.logs.Bytes()[pos:]
	ended = ray.Terminal(j.status)
	end := 0
	for n := 0; n < chunkLines && end <= chunkBytes && end < len(rest); n++ {
		i := bytes.IndexByte(rest[end:], '\n')
		if i < 0 {
			end = len(rest)
			break
		}
		end += i + 1
	}
	return append([]byte(nil), rest[:end]...), ended, j.wake
}

// breaks cuts chunk where the first stream is to break (BreakTailAt).
func (f *Fake) breaks(pos int, chunk *[]byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.BreakTailAt <= 0 || f.broken || pos+len(*chunk) < f.BreakTailAt {
		return false
	}
	f.broken = true
	*chunk = (*chunk)[:f.BreakTailAt-pos]
	return true
}
