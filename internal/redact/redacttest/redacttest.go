// Package redacttest holds what tests of redaction share: the encodings
// a peer can hand a secret back in, the wrappers around it, and a
// detector, written independently of package redact's own matching, that
// says whether text still holds a secret in any form a reader can
// decode.
package redacttest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Encodings are the ways a peer can hand a secret back: each turns text
// (which holds the secret) into what the peer sends.
var Encodings = map[string]func(text string) string{
	"raw":               func(t string) string { return t },
	"base64 std":        func(t string) string { return base64.StdEncoding.EncodeToString([]byte(t)) },
	"base64 url":        func(t string) string { return base64.URLEncoding.EncodeToString([]byte(t)) },
	"base64 raw url":    func(t string) string { return base64.RawURLEncoding.EncodeToString([]byte(t)) },
	"json \\u all":      JSONEscapeAll,
	"json \\u some":     func(t string) string { return JSONEscapeAll(t[:len(t)/2]) + t[len(t)/2:] },
	"json marshal":      func(t string) string { b, _ := json.Marshal(t); return string(b) },
	"percent all":       PercentAll,
	"percent lowercase": func(t string) string { return strings.ToLower(PercentAll(t)) },
	"query escape":      url.QueryEscape,
	"json of base64": func(t string) string {
		return strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(t)), "/", `\/`)
	},
	"percent of base64": func(t string) string { return url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(t))) },
}

// Names returns the names of Encodings, sorted.
func Names() []string {
	names := make([]string, 0, len(Encodings))
	for n := range Encodings {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Wrappers put a secret inside what a peer echoes (fmt verbs).
var Wrappers = []string{"%s", "Bearer %s", "Authorization: Bearer %s", "x%s", "xy%s", `{"k":"%s"}`, "user:%s"}

// JSONEscapeAll writes every byte of t as a JSON \u escape.
func JSONEscapeAll(t string) string {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		fmt.Fprintf(&b, `\u%04x`, t[i])
	}
	return b.String()
}

// PercentAll percent-encodes every byte of t.
func PercentAll(t string) string {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		fmt.Fprintf(&b, "%%%02X", t[i])
	}
	return b.String()
}

var (
	base64Runs = regexp.MustCompile(`[A-Za-z0-9+/]+=*`)
	uEscape    = regexp.MustCompile(`\\+u00([0-9a-fA-F]{2})`)
	pctEscape  = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
)

// Leaks reports whether out still holds secret in a form a reader can
// decode: raw, behind percent or JSON escapes (also escaped twice, as a
// JSON record of an escaped text is), or in base64 (std or URL alphabet,
// any alignment).
func Leaks(out, secret string) bool {
	for _, s := range []string{out, Unescape(out), Unescape(Unescape(out))} {
		if strings.Contains(s, secret) || inBase64(s, secret) {
			return true
		}
	}
	return false
}

func inBase64(s, secret string) bool {
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	for _, run := range base64Runs.FindAllString(s, -1) {
		run = strings.TrimRight(run, "=")
		for k := 0; k < 4 && k < len(run); k++ {
			r := run[k:]
			if len(r)%4 == 1 {
				r = r[:len(r)-1]
			}
			if dec, err := base64.RawStdEncoding.DecodeString(r); err == nil && strings.Contains(string(dec), secret) {
				return true
			}
		}
	}
	return false
}

// Unescape decodes \u00XX (behind any number of backslashes), \/, \",
// \\ and %XX once.
func Unescape(s string) string {
	hex := func(re *regexp.Regexp) func(string) string {
		return func(m string) string {
			v, _ := strconv.ParseUint(re.FindStringSubmatch(m)[1], 16, 8)
			return string([]byte{byte(v)})
		}
	}
	s = uEscape.ReplaceAllStringFunc(s, hex(uEscape))
	s = strings.NewReplacer(`\/`, "/", `\"`, `"`, `\\`, `\`).Replace(s)
	return pctEscape.ReplaceAllStringFunc(s, hex(pctEscape))
}

// KeyChars maps s onto the characters API keys and tokens are made of
// (a credential travels in an Authorization header), for fuzz targets.
func KeyChars(s string) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-"
	b := []byte(s)
	for i, c := range b {
		b[i] = chars[int(c)%len(chars)]
	}
	return string(b)
}
