package runconfig

import (
	"fmt"
	"strconv"
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

// unsafeValue says why an environment variable's value cannot be pasted
// into YAML text as it is ("" when it can): a newline would start new
// keys, and YAML's indicators (": ", " #", flow brackets and commas,
// quotes, a leading anchor, alias, tag, block or directive character)
// would turn a value into structure. Plain values — numbers, durations,
// names, paths, URLs (http://h:8000/v1?a=1&b=2) — pass.
func unsafeValue(v string) string {
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return fmt.Sprintf("a control character (%q)", r)
		}
	}
	switch {
	case strings.ContainsAny(v, "[]{},\"'\\`"):
		return fmt.Sprintf("YAML syntax (%q: brackets, braces, commas, quotes or backslashes)", v)
	case strings.Contains(v, ": ") || strings.HasSuffix(v, ":") || strings.Contains(v, " #"):
		return fmt.Sprintf("YAML syntax (%q: \": \" or \" #\")", v)
	case v != "" && strings.ContainsRune("-?:#&*!|>%@ ", rune(v[0])) && !isNumber(v):
		return fmt.Sprintf("YAML syntax (%q starts with an indicator or a space)", v)
	case strings.HasSuffix(v, " "):
		return fmt.Sprintf("a trailing space (%q)", v)
	}
	return ""
}

// isNumber reports whether v is a plain number (a negative one starts with '-').
func isNumber(v string) bool {
	_, err := strconv.ParseFloat(v, 64)
	return err == nil
}

// expandOne resolves the inside of one ${...}.
func expandOne(expr string, lookup LookupEnv) (string, error) {
	name, def, hasDef := strings.Cut(expr, ":-")
	if !validVarName(name) {
		return "", fmt.Errorf("${%q}: not a variable name (use letters, digits, _)", name)
	}
	if v, ok := lookup(name); ok && (v != "" || !hasDef) {
		if why := unsafeValue(v); why != "" {
			return "", fmt.Errorf("environment variable %s (used as ${%s}) holds %s, which would change the config's structure, not just this value; set it to a plain value or write the value in the file", name, name, why)
		}
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
