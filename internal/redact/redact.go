package redact

import (
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
)

// Mask is what a secret is replaced by.
const Mask = "[REDACTED]"

// minPrefix is the shortest trailing prefix of a secret that is masked
// (shorter ones are indistinguishable from ordinary text); it is also the
// shortest base64 core of a secret that is looked for.
const minPrefix = 4

var (
	// credentialField matches a credential-like key and its separator; the
	// value after it (up to white space, a quote, a comma, a brace or &)
	// is masked. Bearer/Basic schemes inside the value are kept.
	credentialField = regexp.MustCompile(`(?i)((?:proxy-)?authorization|x-api-key|api[-_]?key|[a-z_-]*token|secret|passw(?:or)?d|cookie)(\\?"?\s*[:=]\s*\\?"?)((?:bearer|basic|token)\s+)?[^\s",;&}\\]+`)
	// scheme matches a credential after an HTTP auth scheme anywhere.
	scheme = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`)
	// userinfo matches the password of a URL's user info
	// (scheme://user:PASSWORD@host), whatever the scheme, parsable or not.
	userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s/?#@:]*:)[^\s/?#@]*@`)
)

// Redactor applies the rule for a set of known secret values. The zero
// value (and a nil *Redactor) masks credential-like fields and URL
// passwords only.
type Redactor struct {
	secrets []string  // each secret, longest first
	forms   []literal // the secrets and their base64 cores, longest first
	raw     []string  // the forms' text, for the fast path
}

// literal is one form a secret is looked for in: the secret itself, or
// the part of its base64 encoding (std or URL alphabet) that does not
// depend on the bytes around it, at one of the three alignments.
type literal struct {
	text   string
	base64 string // the alphabet of a base64 core ("" for the secret itself)
}

// New returns a Redactor for the given secret values; empty ones are
// ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if s == "" || contains(r.secrets, s) {
			continue
		}
		r.secrets = append(r.secrets, s)
		r.forms = append(r.forms, literal{text: s})
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			for align := range 3 {
				if core := base64Core(enc, s, align); len(core) >= minPrefix {
					r.forms = append(r.forms, literal{text: core, base64: alphabet(enc)})
				}
			}
		}
	}
	// Longest first, so that a secret containing another is replaced whole.
	sortLongestFirst(r.secrets, func(s string) int { return len(s) })
	sortLongestFirst(r.forms, func(l literal) int { return len(l.text) })
	for _, f := range r.forms {
		r.raw = append(r.raw, f.text)
	}
	return r
}

// base64Core is the run of base64 characters that encodes only bytes of s
// when s starts align bytes (mod 3) into the encoded text: the same
// characters whatever precedes and follows s, so that a secret is found
// inside the base64 of "Bearer <secret>" or "Authorization: Bearer
// <secret>" as well as alone.
func base64Core(enc *base64.Encoding, s string, align int) string {
	full := enc.EncodeToString(append(make([]byte, align), s...))
	from := (8*align + 5) / 6        // first character made of s's bits only
	to := (8 * (align + len(s))) / 6 // past the last one
	if to <= from {
		return ""
	}
	return full[from:to]
}

func alphabet(enc *base64.Encoding) string {
	if enc == base64.URLEncoding {
		return "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	}
	return "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sortLongestFirst is an insertion sort by descending size (the lists
// are short; it keeps the order of equal sizes).
func sortLongestFirst[T any](xs []T, size func(T) int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && size(xs[j]) > size(xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// String returns s with the rule applied: every known secret, raw, in
// base64 (std or URL alphabet, at any alignment, so also inside the
// base64 of a header line carrying it), percent-encoded, JSON-escaped
// (\uXXXX, \/) or any mix of these, becomes Mask, and so does a prefix of
// one left at the end of s; then credential-like fields and URL passwords
// are masked whatever they hold.
func (r *Redactor) String(s string) string {
	if r != nil && len(r.forms) > 0 {
		// A mask can complete a secret with the text around it
		// (secret "D]xy" after "[REDACTED]xy"): repeat while it changes.
		for range 4 {
			next := r.cutTail(r.secretsOut(s))
			if next == s {
				break
			}
			s = next
		}
	}
	// The expressions cost ~20 µs on a 100-byte line; most text a
	// record keeps (an engine id, "queue full") holds none of their
	// keywords, which a lower-cased scan finds out in a fraction of that.
	lower := strings.ToLower(s)
	if strings.Contains(lower, "://") {
		s = userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	}
	if containsAny(lower, "authorization", "key", "token", "secret", "passw", "cookie") {
		s = credentialField.ReplaceAllString(s, "${1}${2}${3}"+Mask)
	}
	if !containsAny(lower, "bearer", "basic") {
		return s
	}
	return scheme.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, Mask) {
			return m
		}
		return m[:strings.IndexAny(m, " \t\r\n")] + " " + Mask
	})
}

func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// Known masks only the known secrets (in every encoding String sees
// through) and URL passwords: the rule for text that is ours but may
// quote a peer or a flag (a terminal stream), where the field masks of
// String would also catch our own words.
func (r *Redactor) Known(s string) string {
	if r != nil && len(r.forms) > 0 {
		s = r.secretsOut(s)
	}
	if strings.Contains(s, "://") {
		s = userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	}
	return s
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

// Field returns s with the rule applied and cut to at most max bytes (on
// a UTF-8 boundary) with a marker saying how much was left out: the form
// in which a string a peer controls (an engine id, a header, a model
// name, an error text) goes into a record.
func (r *Redactor) Field(s string, max int) string {
	return Clip(r.String(s), max)
}

// Clip cuts s to at most max bytes, on a UTF-8 boundary, ending it with
// "…[+N bytes]" (N the bytes left out) when it was longer; max below the
// marker's size keeps the marker alone.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := "…[+" + itoa(len(s)) + " bytes]" // an upper bound of its own size
	cut := max - len(marker)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…[+" + itoa(len(s)-cut) + " bytes]"
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// cutTail masks the end of s when it is the start of a secret (or of one
// of its base64 cores): a body excerpt cut by a length limit may end
// inside one. Escaped forms are seen through (see normalize).
func (r *Redactor) cutTail(s string) string {
	for _, l := range layers(s) {
		for _, f := range r.forms {
			v := f.text
			for n := min(len(v)-1, len(l.text)); n >= minPrefix; n-- {
				if strings.HasSuffix(l.text, v[:n]) {
					return s[:l.at(len(l.text)-n)] + Mask
				}
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
