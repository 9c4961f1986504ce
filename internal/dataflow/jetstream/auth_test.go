package jetstream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestEmbeddedRequiresCredentials: an embedded server started with the
// run's credentials refuses a connection without them or with others,
// and accepts the run's.
func TestEmbeddedRequiresCredentials(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	auth, err := runCredentials()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartEmbedded(ctx, ServerConfig{User: auth.User, Password: auth.Password})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	for name, opts := range map[string][]nats.Option{
		"none":           nil,
		"wrong password": {nats.UserInfo(auth.User, "guess")},
		"token":          {nats.Token(auth.Password)},
	} {
		t.Run(name, func(t *testing.T) {
			nc, err := nats.Connect(srv.URL(), append(opts, nats.Timeout(2*time.Second), nats.NoReconnect())...)
			if err == nil {
				nc.Close()
				t.Fatal("connected without the run's credentials")
			}
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Logf("refused: %v", err)
			}
		})
	}
	nc, err := Connect(ConnConfig{URL: srv.URL(), Auth: auth})
	if err != nil {
		t.Fatalf("the run's credentials: %v", err)
	}
	nc.Close()
}

// TestCheckAuth: an outside server is used without credentials only
// with --nats-insecure.
func TestCheckAuth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		url      string
		auth     Auth
		insecure bool
		refused  bool
	}{
		{"anonymous", "nats://h:4222", Auth{}, false, true},
		{"anonymous, insecure", "nats://h:4222", Auth{}, true, false},
		{"ca only", "tls://h:4222", Auth{CAFile: "ca.pem"}, false, true},
		{"creds", "nats://h:4222", Auth{CredsFile: "x.creds"}, false, false},
		{"nkey", "nats://h:4222", Auth{NKeyFile: "seed"}, false, false},
		{"token", "nats://h:4222", Auth{Token: "t"}, false, false},
		{"user", "nats://h:4222", Auth{User: "u", Password: "p"}, false, false},
		{"client cert", "tls://h:4222", Auth{CertFile: "c", KeyFile: "k"}, false, false},
		{"url user", "nats://u:p@h:4222", Auth{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAuth(tc.url, tc.auth, tc.insecure)
			var ie *InsecureError
			if got := errors.As(err, &ie); got != tc.refused {
				t.Errorf("refused %v (%v), want %v", got, err, tc.refused)
			}
		})
	}
}

// TestJoinToken: a token file must be private and long enough; run keys
// differ by token and by run; a MAC verifies only its own message.
func TestJoinToken(t *testing.T) {
	dir := t.TempDir()
	tok, err := NewJoinToken()
	if err != nil || len(tok) != 64 {
		t.Fatalf("token %q, %v", tok, err)
	}
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJoinToken(path); err == nil {
		t.Error("a world-readable token file accepted")
	}
	os.Chmod(path, 0o600)
	if got, err := ReadJoinToken(path); err != nil || got != tok {
		t.Errorf("read %q, %v", got, err)
	}
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := ReadJoinToken(path); err == nil {
		t.Error("a short token accepted")
	}
	k1, k2, k3 := RunKey(tok, "r1"), RunKey(tok, "r2"), RunKey(tok+"x", "r1")
	mac := MAC(k1, "node-a", "subj", []byte("data"))
	for name, err := range map[string]error{
		"other run":     VerifyMAC(k2, "node-a", "subj", []byte("data"), mac),
		"other token":   VerifyMAC(k3, "node-a", "subj", []byte("data"), mac),
		"other node":    VerifyMAC(k1, "node-b", "subj", []byte("data"), mac),
		"other subject": VerifyMAC(k1, "node-a", "subj2", []byte("data"), mac),
		"other bytes":   VerifyMAC(k1, "node-a", "subj", []byte("dat4"), mac),
		"no key":        VerifyMAC(nil, "node-a", "subj", []byte("data"), mac),
	} {
		if err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	if err := VerifyMAC(k1, "node-a", "subj", []byte("data"), mac); err != nil {
		t.Errorf("own message: %v", err)
	}
}

// FuzzReadJoinToken: whatever a token file holds, reading it never
// panics and yields either an error or one trimmed line of ≥ 32 bytes.
func FuzzReadJoinToken(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef\n"))
	f.Add([]byte("short\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte("  0123456789abcdef0123456789abcdef0123  \r\nsecond line"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "token")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Skip(err)
		}
		tok, err := ReadJoinToken(path)
		if err != nil {
			return
		}
		if len(tok) < 32 || strings.ContainsAny(tok, "\n") || strings.TrimSpace(tok) != tok {
			t.Fatalf("token %q from %q", tok, data)
		}
	})
}
