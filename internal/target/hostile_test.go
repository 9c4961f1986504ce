package target

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const (
	testKey   = "sk-hostile-KEY-0123456789"
	testAdmin = "adm-hostile-TOKEN-9876"
)

// echoTarget answers /v1/models and /health, and makes /admin/policy fail
// with a 500 whose body echoes every request header. It records the
// Authorization each path saw.
type echoTarget struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (e *echoTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.seen[r.URL.Path] = append(e.seen[r.URL.Path], r.Header.Get("Authorization"))
	e.mu.Unlock()
	if r.URL.Path != "/admin/policy" {
		io.WriteString(w, `{"data":[]}`)
		return
	}
	w.WriteHeader(http.StatusInternalServerError)
	// The Authorization echoed first, then padding that puts the key
	// across the 512-byte excerpt limit, then every header.
	var b strings.Builder
	b.WriteString("you sent " + r.Header.Get("Authorization") + " " + testKey + " ")
	b.WriteString(strings.Repeat("p", 512-len(testKey)/2-b.Len()))
	b.WriteString(testKey + " headers: ")
	r.Header.Write(&b)
	io.WriteString(w, b.String())
}

func openEcho(t *testing.T, adminEnv string) (*Target, *echoTarget) {
	t.Helper()
	t.Setenv("HOSTILE_KEY", testKey)
	t.Setenv("HOSTILE_ADMIN", testAdmin)
	t.Setenv(DefaultAdminTokenEnv, "")
	e := &echoTarget{seen: map[string][]string{}}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	tg, err := Open(context.Background(), Config{URL: srv.URL, APIKeyEnv: "HOSTILE_KEY", AdminTokenEnv: adminEnv}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg, e
}

// TestAdminErrorEchoingSecrets is row 1 of issue 11: the admin error body
// echoes Authorization; no secret may reach the error (hence the notes).
func TestAdminErrorEchoingSecrets(t *testing.T) {
	for _, adminEnv := range []string{"", "HOSTILE_ADMIN"} {
		t.Run("admin_token_env="+adminEnv, func(t *testing.T) {
			tg, e := openEcho(t, adminEnv)
			ctx := context.Background()
			_, gerr := tg.Policy(ctx)
			serr := tg.SetPolicy(ctx, "fifo")
			for _, err := range []error{gerr, serr} {
				var ae *AdminError
				if !errors.As(err, &ae) || ae.Status == "" {
					t.Fatalf("error %v: want an *AdminError with the status", err)
				}
				for _, s := range []string{testKey, testAdmin, testKey[:12], testAdmin[:12]} {
					if strings.Contains(err.Error(), s) {
						t.Fatalf("admin error leaks %q: %s", s, err)
					}
				}
			}
			for _, auth := range e.seen["/admin/policy"] {
				if strings.Contains(auth, testKey) {
					t.Fatalf("the API key was sent to /admin/policy (%q)", auth)
				}
				if want := map[string]string{"": "", "HOSTILE_ADMIN": "Bearer " + testAdmin}[adminEnv]; auth != want {
					t.Fatalf("/admin/policy got Authorization %q, want %q", auth, want)
				}
			}
		})
	}
}

// TestAdminRedirectNotFollowed: a 307/302 from /admin/policy or
// /v1/models must not carry the admin token or API key elsewhere.
func TestAdminRedirectNotFollowed(t *testing.T) {
	t.Setenv("HOSTILE_KEY", testKey)
	t.Setenv("HOSTILE_ADMIN", testAdmin)
	var mu sync.Mutex
	var stolen []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		io.WriteString(w, `{"policy":"fifo","data":[]}`)
	}))
	defer thief.Close()
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/health" {
				return
			}
			http.Redirect(w, r, thief.URL+r.URL.Path, code)
		}))
		ctx := context.Background()
		tg, err := Open(ctx, Config{URL: srv.URL, APIKeyEnv: "HOSTILE_KEY", AdminTokenEnv: "HOSTILE_ADMIN"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tg.Policy(ctx); err == nil {
			t.Errorf("%d: Policy followed the redirect", code)
		}
		if err := tg.SetPolicy(ctx, "fifo"); err == nil {
			t.Errorf("%d: SetPolicy followed the redirect", code)
		}
		tg.Close(ctx)
		srv.Close()
	}
	if len(stolen) != 0 {
		t.Fatalf("redirect target got %q", stolen)
	}
}

// TestAdminFailureIsAToolError: a 5xx or a dropped connection on the
// admin API is an *AdminError (exit 1 for the runner), not
// ErrPolicyUnsupported (skip the policy).
func TestAdminFailureIsAToolError(t *testing.T) {
	tests := []struct {
		name string
		h    http.HandlerFunc
	}{
		{"503", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "engine pool down", http.StatusServiceUnavailable)
		}},
		{"dropped", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/admin/policy" {
					tc.h(w, r)
				}
			}))
			defer srv.Close()
			ctx := context.Background()
			tg, err := Open(ctx, Config{URL: srv.URL}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(ctx)
			err = tg.SetPolicy(ctx, "edf")
			var ae *AdminError
			if !errors.As(err, &ae) || errors.Is(err, ErrPolicyUnsupported) {
				t.Fatalf("SetPolicy = %v, want an *AdminError", err)
			}
		})
	}
}
