package remote

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// TestTryRecvReadsOnlyWhatArrived: TryRecv hands over the tokens (and the
// end) that arrived whole with the last read, never waits for the
// network, and says "not ready" for anything it cannot read without it
// (a comment, a CRLF-framed stream: Recv still delivers those at once).
func TestTryRecvReadsOnlyWhatArrived(t *testing.T) {
	const nl = "\n\n"
	done := tokenEvent("z") + nl + `data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":4}}` + nl + "data: [DONE]" + nl
	for _, tc := range []struct {
		name  string
		first string   // written at once; Recv then reads its first token
		ready []string // what TryRecv then hands over
		end   bool     // TryRecv reached the end (io.EOF)
		later []string // what Recv reads after the rest is sent
	}{
		{"tokens that arrived together", tokenEvent("a") + nl + tokenEvent("b") + nl + tokenEvent("c") + nl, []string{"b", "c"}, false, []string{"z"}},
		{"a ready end", tokenEvent("a") + nl + tokenEvent("b") + nl + "data: [DONE]" + nl, []string{"b"}, true, nil},
		{"an event cut short", tokenEvent("a") + nl + tokenEvent("b") + nl + `data: {"choi`, []string{"b"}, false, []string{"z"}},
		{"a comment is not ready", tokenEvent("a") + nl + ": ping" + nl + tokenEvent("b") + nl, nil, false, []string{"b", "z"}},
		{"CRLF framing is never ready", tokenEvent("a") + "\r\n\r\n" + tokenEvent("b") + "\r\n\r\n", nil, false, []string{"b", "z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			s := server(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tc.first)
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				rest := done
				if strings.HasSuffix(tc.first, "choi") {
					rest = `ces":[{"delta":{"content":"z"}}]}` + nl + "data: [DONE]" + nl
				}
				_, _ = io.WriteString(w, rest)
			})
			l, _ := NewLLM(Config{ID: "r", URL: s.URL, Model: "m"})
			st, err := l.Generate(t.Context(), engine.ChatRequest{Prompt: "p", MaxTokens: 4})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			got, end := tryAll(t, st)
			if strings.Join(got, ",") != strings.Join(tc.ready, ",") || end != tc.end {
				t.Fatalf("TryRecv handed over %q (end %v), want %q (end %v)", got, end, tc.ready, tc.end)
			}
			close(release)
			var later []string
			for !end {
				tok, err := st.Recv(t.Context())
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				later = append(later, tok.Text)
			}
			if strings.Join(later, ",") != strings.Join(tc.later, ",") {
				t.Errorf("Recv then read %q, want %q", later, tc.later)
			}
		})
	}
}

// tryAll reads the first token with Recv, then drains TryRecv; a TryRecv
// that waits for the network fails the test instead of hanging it.
func tryAll(t *testing.T, st engine.Stream) (got []string, end bool) {
	t.Helper()
	if tok, err := st.Recv(t.Context()); err != nil || tok.Text != "a" {
		t.Fatalf("first Recv: %q %v", tok.Text, err)
	}
	result := make(chan error, 1)
	go func() {
		for {
			tok, ok, err := st.(interface {
				TryRecv() (engine.Token, bool, error)
			}).TryRecv()
			switch {
			case !ok:
				result <- nil
				return
			case errors.Is(err, io.EOF):
				end = true
				result <- nil
				return
			case err != nil:
				result <- err
				return
			}
			got = append(got, tok.Text)
		}
	}()
	select {
	case err := <-result:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("TryRecv waited for the network")
	}
	return got, end
}
