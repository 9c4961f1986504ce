package stack_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack"
)

// TestReconfigureUnderLoad is Q7 in miniature on real simulated engines:
// while requests stream, an engine is added, another drained and removed,
// and the policy switched. No request may fail.
func TestReconfigureUnderLoad(t *testing.T) {
	cfg := stack.DefaultConfig()
	cfg.Index.Size = 0
	s := startStack(t, cfg, stack.Options{})
	admin := func(method, path, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				path, body := "/v1/chat/completions", `{"messages":[{"role":"user","content":"q"}],"max_tokens":8,"stream":true}`
				if i%5 == 0 {
					path, body = "/v1/embeddings", `{"input":"q"}`
				}
				req, _ := http.NewRequest("POST", s.URL()+path, strings.NewReader(body))
				req.Header.Set("X-Request-Priority", []string{"high", "normal", "low"}[i%3])
				req.Header.Set("X-Tenant-Id", fmt.Sprintf("t%d", w%4))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || strings.Contains(string(b), "event: error") {
					failed.Add(1)
					t.Errorf("%s: %d %.200s", path, resp.StatusCode, b)
					continue
				}
				ok.Add(1)
			}
		}(w)
	}
	step := func() { time.Sleep(150 * time.Millisecond) }
	step()
	admin("POST", "/admin/engines", `{"id":"llm-2","kind":"llm","profile":"llama3.1-8b-h100"}`)
	step()
	admin("POST", "/admin/policy", `{"policy":"fair_share"}`)
	step()
	admin("POST", "/admin/engines/llm-0/drain", "")
	admin("DELETE", "/admin/engines/llm-0", "")
	step()
	admin("POST", "/admin/policy", `{"policy":"adaptive"}`)
	step()
	admin("POST", "/admin/policy", `{"policy":"hybrid"}`)
	step()
	close(stop)
	wg.Wait()
	t.Logf("%d requests ok, %d failed", ok.Load(), failed.Load())
	if failed.Load() != 0 || ok.Load() < 50 {
		t.Fatalf("%d ok, %d failed; want none failed", ok.Load(), failed.Load())
	}
	for _, e := range s.Gateway().Engines() {
		if e.ID == "llm-0" {
			t.Error("removed engine still listed")
		}
	}
}
