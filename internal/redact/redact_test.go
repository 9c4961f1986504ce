package redact

import (
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
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
