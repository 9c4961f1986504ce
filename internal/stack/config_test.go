package stack

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	cases := []struct {
		name    string
		yaml    string
		wantErr string // substring; "" = valid
		check   func(t *testing.T, c Config)
	}{
		{name: "empty file is the default", yaml: "", check: func(t *testing.T, c Config) {
			if len(c.Engines) != 3 || c.Policy != "fifo" || c.Index.Size != 2000 {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "engines replace the default pool", yaml: `
listen: 127.0.0.1:0
policy: fair_share
engines:
  - {id: fast, kind: llm, profile: llama3.1-8b-h100}
  - {id: slow, kind: llm, profile: llama3.1-8b-a10g, process: true}
  - {id: ext, kind: llm, url: "http://127.0.0.1:9", model: m, slots: 8}
quotas:
  tenants:
    gold: {weight: 3, max_concurrent: 10, rate: 5.5}
limits: {max_body_bytes: 2048, queue_timeout: 5s}
`, check: func(t *testing.T, c Config) {
			if len(c.Engines) != 3 || !c.Engines[1].Process || c.Quotas.Tenants["gold"].Weight != 3 ||
				c.Limits.QueueTimeout != 5*time.Second || c.Limits.MaxBodyBytes != 2048 {
				t.Errorf("got %+v", c)
			}
			if _, ok := c.indexEmbedder(); ok {
				t.Error("index without an embedding engine")
			}
		}},
		{name: "unknown top-level key", yaml: "listn: 127.0.0.1:0", wantErr: "listn"},
		{name: "unknown engine key", yaml: "engines:\n  - {id: a, kind: llm, profile: p, gpu: 1}", wantErr: "gpu"},
		{name: "wrong type", yaml: "seed: many", wantErr: "seed"},
		{name: "bad policy", yaml: "policy: random", wantErr: "policy"},
		{name: "bad kind", yaml: "engines:\n  - {id: a, kind: gpu, profile: p}", wantErr: "engines[0]: kind"},
		{name: "profile and url", yaml: "engines:\n  - {id: a, kind: llm, profile: p, url: 'http://x', model: m}", wantErr: "exactly one"},
		{name: "url without model", yaml: "engines:\n  - {id: a, kind: llm, url: 'http://x'}", wantErr: "model"},
		{name: "duplicate ids", yaml: "engines:\n  - {id: a, kind: llm, profile: p}\n  - {id: a, kind: llm, profile: p}", wantErr: "duplicate id"},
		{name: "no engines", yaml: "engines: []", wantErr: "engines"},
		{name: "negative limit", yaml: "limits: {max_tokens: -1}", wantErr: "limits.max_tokens"},
		{name: "default above max tokens", yaml: "limits: {max_tokens: 10, default_max_tokens: 20}", wantErr: "default_max_tokens"},
		{name: "negative quota", yaml: "quotas: {tenants: {a: {rate: -1}}}", wantErr: "quotas.tenants.a"},
		{name: "bad listen", yaml: "listen: nowhere", wantErr: "listen"},
		{name: "index embedder is an llm", yaml: "index: {embedder: llm-0}", wantErr: "index.embedder"},
		{name: "hybrid fallback", yaml: "scheduler: {fallback: adaptive}", wantErr: "scheduler.fallback"},
		{name: "tagged mapping where a list goes", yaml: "engines:\n !0\n    0: 0\n", wantErr: "malformed YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.yaml))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, c)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
			}
		})
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stack.yaml")
	if err := os.WriteFile(path, []byte("bogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("error %v, want one naming the file and the key", err)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestAdminTokenRequiredOffLoopback(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Listen = "0.0.0.0:0"
	cfg.Index.Size = 0
	_, err := Start(t.Context(), cfg, Options{Getenv: func(string) string { return "" }})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "SAGEBENCH_ADMIN_TOKEN") {
		t.Fatalf("error %v, want a ConfigError naming the token variable", err)
	}
}

// TestListenResolvedBeforeTheTokenCheck is attack 3 of issue 28: with a
// hosts file mapping localhost to another address, `--listen
// localhost:P` bound that address without a token because the name was
// taken for loopback. Now the name is resolved and the address checked.
func TestListenResolvedBeforeTheTokenCheck(t *testing.T) {
	hosts := map[string][]net.IP{"localhost": {net.IPv4zero}, "box": {net.ParseIP("10.1.2.3")}, "lo.example": {net.ParseIP("127.0.0.2")}}
	lookup := func(_ context.Context, h string) ([]net.IP, error) {
		if ips, ok := hosts[h]; ok {
			return ips, nil
		}
		return nil, errors.New("no such host")
	}
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, ":8080": false, "10.0.0.1:80": false,
		"localhost:1": false, "box:1": false, "lo.example:1": true} {
		a, err := resolveListen(t.Context(), addr, lookup)
		if err != nil || a.loopback != want {
			t.Errorf("resolveListen(%q) = %+v, %v; want loopback %v", addr, a, err, want)
		}
	}
	cfg := DefaultConfig()
	cfg.Listen = "localhost:0"
	cfg.Index.Size = 0
	_, err := Start(t.Context(), cfg, Options{Getenv: func(string) string { return "" }, LookupIP: lookup})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("Start on a localhost that resolves to 0.0.0.0: %v, want a ConfigError asking for the token", err)
	}
}
