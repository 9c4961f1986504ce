package runconfig

import (
	"fmt"
	"strings"
)

// LookupEnv is how Expand reads a variable; os.LookupEnv in production.
type LookupEnv func(name string) (string, bool)

// Expand substitutes ${VAR} and ${VAR:-default} in src. An unset VAR
// without a default is an error naming it (${VAR:-} gives the empty
// string). $${ is a literal "${". A bare $ or $VAR stays as it is.
// Variable names are letters, digits and '_', not starting with a digit.
func Expand(src string, lookup LookupEnv) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(src, "${")
		if i < 0 {
			b.WriteString(src)
			return b.String(), nil
		}
		if i > 0 && src[i-1] == '$' { // $${ → literal ${
			b.WriteString(src[:i-1] + "${")
			src = src[i+2:]
			continue
		}
		b.WriteString(src[:i])
		end := strings.IndexByte(src[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ at offset %d", i)
		}
		val, err := expandOne(src[i+2:i+end], lookup)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		src = src[i+end+1:]
	}
}

// expandOne resolves the inside of one ${...}.
func expandOne(expr string, lookup LookupEnv) (string, error) {
	name, def, hasDef := strings.Cut(expr, ":-")
	if !validVarName(name) {
		return "", fmt.Errorf("${%q}: not a variable name (use letters, digits, _)", name)
	}
	if v, ok := lookup(name); ok && (v != "" || !hasDef) {
		return v, nil
	}
	if hasDef {
		return def, nil
	}
	return "", fmt.Errorf("environment variable %s is not set (used as ${%s}); set it or write ${%s:-default}", name, name, name)
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
