package redact

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// Mask is what a secret is replaced by.
const Mask = "[REDACTED]"

// minPrefix is the shortest trailing prefix of a secret that is masked
// (shorter ones are indistinguishable from ordinary text).
const minPrefix = 4

var (
	// credentialField matches a credential-like key and its separator; the
	// value after it (up to white space, a quote, a comma, a brace or &)
	// is masked. Bearer/Basic schemes inside the value are kept.
	credentialField = regexp.MustCompile(`(?i)((?:proxy-)?authorization|x-api-key|api[-_]?key|[a-z_-]*token|secret|passw(?:or)?d|cookie)(\\?"?\s*[:=]\s*\\?"?)((?:bearer|basic|token)\s+)?[^\s",;&}\\]+`)
	// scheme matches a credential after an HTTP auth scheme anywhere.
	scheme = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`)
)

// Redactor applies the rule for a set of known secret values. The zero
// value (and a nil *Redactor) masks credential-like fields only.
type Redactor struct {
	secrets []string // each secret and its encoded forms, longest first
}

// New returns a Redactor for the given secret values; empty ones are
// ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		j, _ := json.Marshal(s)
		r.secrets = append(r.secrets, s, url.QueryEscape(s), url.PathEscape(s),
			strings.Trim(string(j), `"`), strings.ReplaceAll(s, "/", `\/`), base64.StdEncoding.EncodeToString([]byte(s)),
			base64.RawURLEncoding.EncodeToString([]byte(s)))
	}
	// Longest first, so that a secret containing another is replaced whole.
	for i := 1; i < len(r.secrets); i++ {
		for j := i; j > 0 && len(r.secrets[j]) > len(r.secrets[j-1]); j-- {
			r.secrets[j], r.secrets[j-1] = r.secrets[j-1], r.secrets[j]
		}
	}
	return r
}

// String returns s with the rule applied.
func (r *Redactor) String(s string) string {
	if r != nil {
		for _, v := range r.secrets {
			s = strings.ReplaceAll(s, v, Mask)
		}
		s = r.cutTail(s)
	}
	s = credentialField.ReplaceAllString(s, "${1}${2}${3}"+Mask)
	return scheme.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, Mask) {
			return m
		}
		return m[:strings.IndexAny(m, " \t\r\n")] + " " + Mask
	})
}

// Error returns err with the rule applied to its text; nil stays nil. The
// result is err itself when the text is clean; otherwise a new error that
// does not unwrap (the chain would print the secret) but still matches
// err's sentinels under errors.Is.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := r.String(msg); clean != msg {
		return &redactedError{msg: clean, class: err}
	}
	return err
}

// cutTail masks the end of s when it is the start of a secret: a body
// excerpt cut by a length limit may end inside one.
func (r *Redactor) cutTail(s string) string {
	for _, v := range r.secrets {
		for n := min(len(v)-1, len(s)); n >= minPrefix; n-- {
			if strings.HasSuffix(s, v[:n]) {
				return s[:len(s)-n] + Mask
			}
		}
	}
	return s
}

// redactedError carries the clean text. It does not unwrap (the chain
// would print the secret again) but errors.Is still sees the sentinels of
// the original error.
type redactedError struct {
	msg   string
	class error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.class, target) }
