package redact

import "strings"

// credentialWords are the words that make a field or label name
// credential-like, once lower-cased with '-' and '_' removed (so
// "API-Key", "api_key" and "apikey" are one name).
var credentialWords = []string{"password", "passwd", "secret", "token", "apikey", "authorization", "cookie"}

// CredentialName reports whether a field or label name is credential-like:
// it holds password, passwd, secret, token, api_key, authorization or
// cookie, case-insensitive, with or without '-' and '_' ("X-Auth-Token",
// "db_password", "API-KEY", "set_cookie").
func CredentialName(name string) bool {
	n := strings.ToLower(name)
	if strings.ContainsAny(n, "-_") {
		n = strings.NewReplacer("-", "", "_", "").Replace(n)
	}
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Label returns a label's (or any named field's) value with the rule
// applied: the whole value is Mask when the name is credential-like
// (CredentialName), whatever it holds; otherwise the value passes
// through String (a Bearer token or a URL password in it is masked).
func (r *Redactor) Label(name, value string) string {
	if CredentialName(name) && value != "" {
		return Mask
	}
	return r.String(value)
}
