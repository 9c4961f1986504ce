package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sagebench/sagebench/internal/redact/redacttest"
)

func TestString(t *testing.T) {
	const key, admin = "sk-live-0123456789abcdef", "adm!n/t0ken+x"
	r := New(key, admin, "")
	tests := []struct {
		name, in string
		want     string // exact output
	}{
		{"clean text", "engine llm-0 overloaded", "engine llm-0 overloaded"},
		{"key verbatim", "bad key " + key + " here", "bad key [REDACTED] here"},
		{"admin token url-escaped", "token=adm%21n%2Ft0ken%2Bx&x=1", "token=[REDACTED]&x=1"},
		{"key base64", "got " + base64.StdEncoding.EncodeToString([]byte(key)), "got [REDACTED]"},
		{"authorization header echo", `{"headers":{"Authorization":"Bearer whatever-unknown"}}`, `{"headers":{"Authorization":"Bearer [REDACTED]"}}`},
		{"header line", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED]"},
		{"api_key field", `api_key=abcd1234 and "x-api-key": "zz99"`, `api_key=[REDACTED] and "x-api-key": "[REDACTED]"`},
		{"bare bearer", "sent bearer abcdefgh1234", "sent bearer [REDACTED]"},
		{"ordinary words stay", "basic checks failed; max_tokens: 4096 exceeds the limit", "basic checks failed; max_tokens: 4096 exceeds the limit"},
		{"key cut by a length limit", "echo: Bearer-less sk-live-0123", "echo: Bearer-less [REDACTED]"},
		{"json escaped token", `{"t":"adm!n\/t0ken+x"}`, `{"t":"[REDACTED]"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := r.String(tc.in)
			if got != tc.want {
				t.Fatalf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNilRedactorMasksFields(t *testing.T) {
	var r *Redactor
	if got := r.String("Authorization: Bearer abc12345"); got != "Authorization: Bearer [REDACTED]" {
		t.Fatalf("nil Redactor: %q", got)
	}
}

func TestError(t *testing.T) {
	r := New("secret-value-1")
	err := r.Error(errors.Join(io.ErrUnexpectedEOF, errors.New("body: secret-value-1")))
	if strings.Contains(err.Error(), "secret-value-1") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Error = %v (Is EOF: %v)", err, errors.Is(err, io.ErrUnexpectedEOF))
	}
	if errors.Unwrap(err) != nil {
		t.Fatal("a redacted error unwraps to its secret text")
	}
	clean := errors.New("fine")
	if r.Error(clean) != clean || r.Error(nil) != nil {
		t.Fatal("a clean error must be returned as is")
	}
}

func FuzzString(f *testing.F) {
	f.Add("Authorization: Bearer sk-1234", "sk-1234")
	f.Add(`{"api_key":"x"}`, "x")
	f.Fuzz(func(t *testing.T, s, secret string) {
		out := New(secret).String(s)
		if len(secret) >= minPrefix && strings.Contains(out, secret) && !strings.Contains(Mask, secret) {
			t.Fatalf("secret %q survives in %q", secret, out)
		}
	})
}

func TestSecretInEveryEncoding(t *testing.T) {
	const key, admin = "sk-live-0123456789abcdef", "adm!n/t0ken+x y"
	r := New(key, admin)
	for name, enc := range redacttest.Encodings {
		for _, wrap := range redacttest.Wrappers {
			for _, secret := range []string{key, admin} {
				in := "the target said: " + enc(fmt.Sprintf(wrap, secret)) + " (status 400)"
				out := r.String(in)
				if redacttest.Leaks(out, secret) {
					t.Errorf("%s of %q: the secret survives in %q", name, wrap, out)
				}
				if !strings.HasPrefix(out, "the target said: ") || !strings.HasSuffix(out, " (status 400)") {
					t.Errorf("%s of %q: the text around the secret was masked too: %q", name, wrap, out)
				}
			}
		}
	}
}

func TestDetectorSeesEveryEncoding(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	for name, enc := range redacttest.Encodings {
		for _, wrap := range redacttest.Wrappers {
			if in := enc(fmt.Sprintf(wrap, secret)); !redacttest.Leaks(in, secret) {
				t.Errorf("the test's detector misses %s of %q: %q", name, wrap, in)
			}
		}
	}
}

func TestURLPassword(t *testing.T) {
	for _, in := range []string{
		`target "htp://alice:PW-secret@127.0.0.1:1": want an http(s) URL`,
		"dial nats://bob:hunter2@10.0.0.1:4222: refused",
		"http://alice:p%40ss@host/v1",
	} {
		out := New().String(in)
		for _, pw := range []string{"PW-secret", "hunter2", "p%40ss"} {
			if strings.Contains(out, pw) {
				t.Errorf("%q → %q keeps the password", in, out)
			}
		}
		if !strings.Contains(out, Mask+"@") {
			t.Errorf("%q → %q: no mask where the password was", in, out)
		}
	}
	if in := "http://host:8080/a@b and alice@example.com"; New().String(in) != in {
		t.Errorf("a port or an e-mail address was masked: %q", New().String(in))
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 5000) // 2 bytes each
	got := Clip(long, 256)
	if len(got) > 256 || !strings.HasSuffix(got, " bytes]") || !utf8.ValidString(got) {
		t.Fatalf("Clip = %q (%d bytes)", got, len(got))
	}
	if Clip("short", 256) != "short" {
		t.Fatal("a short string was changed")
	}
	if got := New("s3cr3t-v4lue").Field("engine-s3cr3t-v4lue"+strings.Repeat("x", 1000), 64); strings.Contains(got, "s3cr3t") || len(got) > 64 {
		t.Fatalf("Field = %q", got)
	}
}

func TestWriter(t *testing.T) {
	var out strings.Builder
	var set Set
	w := NewWriter(&out, set.String)
	set.Add("sk-the-key-123456")
	fmt.Fprint(w, "progress 1\r")
	if out.String() != "progress 1\r" {
		t.Fatalf("a line ended by \\r was held back: %q", out.String())
	}
	fmt.Fprint(w, "error: sk-the-")
	fmt.Fprint(w, "key-123456 refused\n")
	fmt.Fprint(w, "tail Bearer sk-the-key-123456")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "key-123456") || !strings.Contains(out.String(), "error: [REDACTED] refused\n") {
		t.Fatalf("Writer wrote %q", out.String())
	}
	if w.Unwrap() != &out {
		t.Fatal("Unwrap does not return the writer underneath")
	}
}

// FuzzEncodings embeds a secret in a peer's text in a random encoding
// and wrapper and checks that no form of it survives the rule.
func FuzzEncodings(f *testing.F) {
	f.Add("sk-live-0123456789abcdef", "before ", " after", uint8(0), uint8(1))
	f.Add("adm!n/t0ken+x", `{"error":"`, `"}`, uint8(4), uint8(2))
	f.Add("tok_AAAA////", "", "", uint8(1), uint8(0))
	names := redacttest.Names()
	f.Fuzz(func(t *testing.T, secret, before, after string, enc, wrap uint8) {
		secret = redacttest.KeyChars(secret)
		if len(secret) < 8 || len(secret) > 128 || len(before)+len(after) > 4096 {
			t.Skip()
		}
		name := names[int(enc)%len(names)]
		text := redacttest.Encodings[name](fmt.Sprintf(redacttest.Wrappers[int(wrap)%len(redacttest.Wrappers)], secret))
		out := New(secret).String(before + text + after)
		if redacttest.Leaks(out, secret) {
			t.Fatalf("%s: secret %q survives in %q", name, secret, out)
		}
	})
}

// TestLabel: a credential-named label's value is masked whatever it
// holds, whatever the case and separators of the name; other values pass
// through the content rule (issue 41, hole 2).
func TestLabel(t *testing.T) {
	var r *Redactor
	tests := []struct{ name, value, want string }{
		{"password", "hunter2", Mask},
		{"PASSWD", "hunter2", Mask},
		{"db_password", "x", Mask},
		{"client-secret", "abc", Mask},
		{"Auth_Token", "abc", Mask},
		{"api_key", "sk-1", Mask},
		{"API-KEY", "sk-1", Mask},
		{"apikey", "sk-1", Mask},
		{"authorization", "Bearer sk-abcdefgh12", Mask},
		{"Cookie", "session=1", Mask},
		{"instance", "http://bob:hunter2pw@db:5432", "http://bob:" + Mask + "@db:5432"},
		{"header", "Bearer sk-abcdefgh12345", "Bearer " + Mask},
		{"job", "gateway", "gateway"},
		{"password", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			if got := r.Label(tt.name, tt.value); got != tt.want {
				t.Errorf("Label(%q, %q) = %q, want %q", tt.name, tt.value, got, tt.want)
			}
		})
	}
}
