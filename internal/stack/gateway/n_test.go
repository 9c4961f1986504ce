package gateway

import (
	"strings"
	"testing"
)

// TestChatNOtherThanOneIs400 (issue 41, hole 7): n > 1 (even 1e9) was
// ignored and one choice returned; it is a 400 naming the field, and
// n = 1 (or absent) is served as before.
func TestChatNOtherThanOneIs400(t *testing.T) {
	llm := newFakeLLM("e1", 4)
	h := newHarness(t, Config{}, map[string]Member{"e1": {LLM: llm}})
	body := func(n string) string {
		return `{"model":"m-llm","messages":[{"role":"user","content":"hi"}],"max_tokens":2` + n + `}`
	}
	for _, tc := range []struct {
		name, n string
		status  int
	}{
		{"absent", "", 200},
		{"one", `,"n":1`, 200},
		{"one as 1.0", `,"n":1.0`, 200},
		{"null", `,"n":null`, 200},
		{"two", `,"n":2`, 400},
		{"1e9", `,"n":1e9`, 400},
		{"zero", `,"n":0`, 400},
		{"a string", `,"n":"3"`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/v1/chat/completions", body(tc.n), nil)
			if r.status != tc.status || tc.status == 400 && !strings.Contains(string(r.body), "field n") {
				t.Errorf("status %d %s, want %d", r.status, r.body, tc.status)
			}
		})
	}
}
