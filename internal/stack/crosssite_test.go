package stack_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/stack"
)

// TestAdminAPIRefusesCrossSiteUse is attack 3 of issue 28: a web page
// the operator opens could drive serve's admin API on loopback — POST
// text/plain with any Origin and Host switched the policy, added an
// engine at the attacker's URL and drained llm-0 and llm-1. Each such
// request is now refused and the stack is left as it was; the same
// calls from a client (JSON, no Origin, a loopback Host) still work.
func TestAdminAPIRefusesCrossSiteUse(t *testing.T) {
	cfg := stack.DefaultConfig()
	cfg.Index.Size = 0
	s := startStack(t, cfg, stack.Options{Getenv: func(string) string { return "" }})
	send := func(method, path, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	form := map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}
	jsonFromPage := map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}
	rebound := map[string]string{"Content-Type": "application/json", "Host": "evil.example:80"}
	crossSite := map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}
	attacks := []struct {
		name, method, path, body string
		hdr                      map[string]string
	}{
		{"policy as text/plain", "POST", "/admin/policy", `{"policy":"priority"}`, form},
		{"policy without a content type", "POST", "/admin/policy", `{"policy":"priority"}`, map[string]string{}},
		{"engine at the attacker's URL", "POST", "/admin/engines", `{"id":"evil","kind":"llm","url":"http://203.0.113.9:80","model":"m"}`, form},
		{"drain llm-0 from a page", "POST", "/admin/engines/llm-0/drain", ``, form},
		{"drain llm-1, JSON with a foreign Origin", "POST", "/admin/engines/llm-1/drain", ``, jsonFromPage},
		{"policy through DNS rebinding", "POST", "/admin/policy", `{"policy":"priority"}`, rebound},
		{"engines read through DNS rebinding", "GET", "/admin/engines", ``, rebound},
		{"remove llm-0 cross-site", "DELETE", "/admin/engines/llm-0", ``, crossSite},
		{"policy with Origin null", "POST", "/admin/policy", `{"policy":"priority"}`, map[string]string{"Content-Type": "application/json", "Origin": "null"}},
	}
	for _, a := range attacks {
		if code, body := send(a.method, a.path, a.body, a.hdr); code/100 == 2 {
			t.Errorf("%s: %d %s, want a refusal", a.name, code, body)
		}
	}
	if got := s.Gateway().Policy(); got != "fifo" {
		t.Errorf("policy is %q after the attacks, want fifo", got)
	}
	for _, e := range s.Gateway().Engines() {
		if e.ID == "evil" || e.State != "active" {
			t.Errorf("engine %s is %s after the attacks", e.ID, e.State)
		}
	}
	// A client's calls still work: JSON, no Origin, a loopback Host (a
	// same-origin Origin is fine too).
	ok := map[string]string{"Content-Type": "application/json; charset=utf-8"}
	if code, body := send("POST", "/admin/policy", `{"policy":"priority"}`, ok); code != 200 {
		t.Fatalf("a client's policy switch: %d %s", code, body)
	}
	local := "localhost:" + s.URL()[strings.LastIndex(s.URL(), ":")+1:]
	same := map[string]string{"Content-Type": "application/json", "Origin": "http://" + local, "Host": local}
	if code, body := send("GET", "/admin/policy", ``, same); code != 200 || !strings.Contains(body, "priority") {
		t.Fatalf("same-origin read on localhost: %d %s", code, body)
	}
	var list struct{ Data []json.RawMessage }
	code, body := send("GET", "/admin/engines", ``, nil)
	if json.Unmarshal([]byte(body), &list); code != 200 || len(list.Data) != 3 {
		t.Fatalf("engines: %d %s", code, body)
	}
}
