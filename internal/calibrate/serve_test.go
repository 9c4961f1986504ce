package calibrate_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/calibrate"
	"github.com/sagebench/sagebench/internal/openai"
)

// TestServeWritesTruth: the conformance server logs, per answered
// request, what it really did — never earlier than due, one write time
// per token — and honours max_tokens, the default length, the role chunk
// and text completions.
func TestServeWritesTruth(t *testing.T) {
	var log bytes.Buffer
	srv, err := calibrate.StartServe(calibrate.Config{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond},
		calibrate.Serve{Log: &log, DefaultTokens: 3, RoleChunk: true, Models: []string{"cal"}})
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, srv.URL())
	ctx := context.Background()
	res := c.Chat(ctx, openai.ChatRequest{Model: "cal", MaxTokens: 4, Stream: true, Messages: []openai.Message{{Role: "user", Content: "x"}}})
	if res.Err != nil || len(res.Tokens) != 4 {
		t.Fatalf("streamed chat: err %v, %d tokens timed, want 4", res.Err, len(res.Tokens))
	}
	post(t, srv.URL()+calibrate.PathCompletions, `{"model":"cal","prompt":"x","stream":true}`, `"text":"t "`)
	post(t, srv.URL()+"/v1/chat/completions", `{"model":"cal","messages":[],"stream":true}`, `"role":"assistant"`)
	post(t, srv.URL()+"/v1/chat/completions", `{"model":"cal","messages":[],"max_completion_tokens":2}`, `"completion_tokens":2`)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	truth, err := calibrate.ReadTruth(&log)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		stream bool
		tokens int
	}{{true, 4}, {true, 3}, {true, 3}, {false, 2}}
	if len(truth) != len(want) {
		t.Fatalf("%d truth lines, want %d", len(truth), len(want))
	}
	for i, w := range want {
		tr := truth[i]
		if tr.Seq != int64(i+1) || tr.Stream != w.stream || tr.Tokens != w.tokens {
			t.Errorf("line %d: seq %d stream %v tokens %d, want %d %v %d", i+1, tr.Seq, tr.Stream, tr.Tokens, i+1, w.stream, w.tokens)
		}
		due := 20 + float64(w.tokens-1)*5
		if tr.E2EMs < due || (w.stream && (tr.TTFTMs < 20 || len(tr.TokenMs) != w.tokens)) {
			t.Errorf("line %d: %+v earlier than due (ttft 20, e2e %v) or missing write times", i+1, tr, due)
		}
		if tr.DueTTFTMs != 20 || tr.DueITLMs != 5 {
			t.Errorf("line %d: due %v/%v, want 20/5", i+1, tr.DueTTFTMs, tr.DueITLMs)
		}
	}
}

func post(t *testing.T, url, body, want string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
		t.Fatalf("POST %s: %d %q, want %q in it", url, resp.StatusCode, b, want)
	}
}

func TestServeValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    calibrate.Serve
		ok   bool
	}{
		{"default", calibrate.Serve{}, true},
		{"loopback", calibrate.Serve{Addr: "127.0.0.1:0"}, true},
		{"localhost", calibrate.Serve{Addr: "localhost:8000"}, true},
		{"all interfaces", calibrate.Serve{Addr: ":8000"}, false},
		{"public", calibrate.Serve{Addr: "10.0.0.1:8000"}, false},
		{"no port", calibrate.Serve{Addr: "127.0.0.1"}, false},
		{"negative tokens", calibrate.Serve{DefaultTokens: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.o.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func FuzzReadTruth(f *testing.F) {
	f.Add([]byte(`{"seq":1,"recv_ns":1,"stream":true,"tokens":2,"ttft_ms":50.1,"e2e_ms":60.2,"token_ms":[50.1,60.2],"due_ttft_ms":50,"due_itl_ms":10}` + "\n"))
	f.Add([]byte("{\n"))
	f.Add([]byte(`{"tokens":1,"token_ms":[1,2,3]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		truth, err := calibrate.ReadTruth(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, tr := range truth {
			if len(tr.TokenMs) > tr.Tokens {
				t.Fatalf("accepted %d write times for %d tokens", len(tr.TokenMs), tr.Tokens)
			}
		}
		calibrate.GradeExport(calibrate.Export{}, truth)
	})
}
