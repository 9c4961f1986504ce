package target

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/target/targettest"
)

func TestDescribeHidesSecrets(t *testing.T) {
	cases := map[string]string{
		"http://user:sk-secret@127.0.0.1:8000/v1?api_key=sk-2#frag": "http://127.0.0.1:8000/v1",
		"https://gw.example:443":                                    "https://gw.example:443",
	}
	for in, want := range cases {
		if got := Describe(in); got != want || strings.Contains(got, "sk-") {
			t.Errorf("Describe(%q) = %q, want %q", in, got, want)
		}
	}
	if got := BaseURL("http://127.0.0.1:8000/v1/"); got != "http://127.0.0.1:8000" {
		t.Errorf("BaseURL = %q", got)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "embedded"}, ""},
		{Config{}, ""},
		{Config{URL: "http://127.0.0.1:1"}, ""},
		{Config{URL: "ftp://x"}, "want \"embedded\""},
		{Config{URL: "127.0.0.1:80"}, "want \"embedded\""},
		{Config{URL: "http://127.0.0.1:1", StackConfig: "s.yaml"}, "embedded target only"},
		{Config{URL: "embedded", Timeout: -1}, "timeout"},
		{Config{URL: "embedded", MaxConns: -1}, "max_conns"},
		{Config{URL: "embedded", MaxBytesInFlight: -1}, "max_bytes_in_flight"},
		{Config{URL: "http://127.0.0.1:1/v1?api_key=x"}, "query"},
		{Config{URL: "http://127.0.0.1:1/#x"}, "query"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestOpenURLTargetAndPolicy(t *testing.T) {
	srv := targettest.NewServer(targettest.OK)
	defer srv.Close()
	ctx := context.Background()
	tg, err := Open(ctx, Config{URL: srv.URL + "/v1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(ctx)
	if tg.URL() != srv.URL || tg.IsEmbedded() || tg.Client() == nil {
		t.Errorf("url %q embedded %v", tg.URL(), tg.IsEmbedded())
	}
	if err := tg.SetPolicy(ctx, "slo_aware"); err != nil {
		t.Fatal(err)
	}
	if p, err := tg.Policy(ctx); err != nil || p != "slo_aware" {
		t.Errorf("Policy = %q, %v", p, err)
	}
	srv.NoAdmin = true
	if err := tg.SetPolicy(ctx, "fifo"); !errors.Is(err, ErrPolicyUnsupported) {
		t.Errorf("SetPolicy without admin API: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	_, err := Open(ctx, Config{URL: dead}, Options{})
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), dead) || strings.Contains(err.Error(), "\n") {
		t.Errorf("unreachable: %v", err)
	}
	if _, err := Open(ctx, Config{URL: "embedded"}, Options{}); err == nil || !strings.Contains(err.Error(), "not in this build") {
		t.Errorf("embedded without a starter: %v", err)
	}
	t.Setenv("SAGEBENCH_TEST_KEY", "")
	if _, err := Open(ctx, Config{URL: dead, APIKeyEnv: "SAGEBENCH_TEST_KEY"}, Options{}); err == nil || !strings.Contains(err.Error(), "SAGEBENCH_TEST_KEY") {
		t.Errorf("unset key env: %v", err)
	}
	stopped := false
	start := func(context.Context, StackSpec) (string, func(context.Context) error, error) {
		return dead, func(context.Context) error { stopped = true; return nil }, nil
	}
	if _, err := Open(ctx, Config{}, Options{Start: start}); err == nil || !stopped {
		t.Errorf("an embedded stack that does not answer must be stopped: err %v, stopped %v", err, stopped)
	}
}

func TestEmbeddedStack(t *testing.T) {
	ctx := context.Background()
	tg, err := Open(ctx, Config{URL: Embedded}, Options{Start: EmbeddedStack(nil), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(ctx)
	if !tg.IsEmbedded() || !strings.HasPrefix(tg.URL(), "http://127.0.0.1:") {
		t.Errorf("embedded target at %q", tg.URL())
	}
	for _, p := range []string{"priority", "fifo"} {
		if err := tg.SetPolicy(ctx, p); err != nil {
			t.Fatal(err)
		}
		if got, err := tg.Policy(ctx); err != nil || got != p {
			t.Errorf("policy %q, %v; want %s", got, err, p)
		}
	}
	if err := tg.SetPolicy(ctx, "lottery"); err == nil || errors.Is(err, ErrPolicyUnsupported) {
		t.Errorf("unknown policy: %v", err)
	}
}

func TestEmbeddedStackFromWorkloadYAML(t *testing.T) {
	ctx := context.Background()
	yaml := []byte("policy: priority\nindex: {size: 50}\n")
	tg, err := Open(ctx, Config{}, Options{Start: EmbeddedStack(nil), StackYAML: yaml})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(ctx)
	if p, err := tg.Policy(ctx); err != nil || p != "priority" {
		t.Errorf("policy %q, %v: the workload's stack YAML was not used", p, err)
	}
	if _, err := Open(ctx, Config{}, Options{Start: EmbeddedStack(nil), StackYAML: []byte("polcy: x\n")}); err == nil {
		t.Error("a bad stack YAML was accepted")
	}
}

// TestPolicyErrorIsOneCleanLine: what a hostile admin API answers ends up
// in an error, a note and the terminal; it must be one printable line.
func TestPolicyErrorIsOneCleanLine(t *testing.T) {
	tests := []struct{ name, body string }{
		{"newlines", "bad policy\nsecond line\r\nthird"},
		{"terminal escapes", "\x1b[2J\x1b[31mred\x1b[0m"},
		{"binary", "\x00\x01\xff\xfe junk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/admin/policy" {
					w.WriteHeader(http.StatusInternalServerError)
					w.Write([]byte(tc.body))
				}
			}))
			defer srv.Close()
			ctx := context.Background()
			tg, err := Open(ctx, Config{URL: srv.URL}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(ctx)
			err = tg.SetPolicy(ctx, "fifo")
			if err == nil {
				t.Fatal("SetPolicy succeeded against a 500")
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r\x1b\x00") || !strings.Contains(msg, "500") {
				t.Errorf("error %q: want one printable line naming the status", msg)
			}
		})
	}
}
