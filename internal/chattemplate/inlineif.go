package chattemplate

import "strings"

// gonja (v2.9.1, the newest) parses an inline if only as the whole
// expression of an output {{ … }} or a {% set %}, not inside one: Gemma
// 3's `{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if
// loop.first else "") }}` fails with "Unbalanced parenthesis". liftInlineIfs
// rewrites such a tag into the form gonja has, the condition lifted to the
// top: `{{ (… + (first_user_prefix)) if loop.first else (… + ("")) }}` —
// the same value, since a Jinja expression has no side effects but a
// raise_exception, which either form raises alike. Only a tag with exactly
// one parenthesized `A if C else B` (no other inline if, none nested) is
// rewritten; anything else is left for gonja to accept or refuse.
func liftInlineIfs(src string) string {
	var b strings.Builder
	for {
		i := strings.Index(src, "{")
		if i < 0 || i+1 >= len(src) {
			b.WriteString(src)
			return b.String()
		}
		open := src[i : i+2]
		if open != "{{" && open != "{%" && open != "{#" {
			b.WriteString(src[:i+1])
			src = src[i+1:]
			continue
		}
		end := tagEnd(src[i+2:], open)
		if end < 0 {
			b.WriteString(src)
			return b.String()
		}
		body := src[i+2 : i+2+end]
		b.WriteString(src[:i+2])
		b.WriteString(liftTag(open, body))
		src = src[i+2+end:]
	}
}

// tagEnd is the offset in s (after the tag's opener) of its closer ("}}",
// "%}", "#}", with an optional "-" before it), skipping string literals;
// −1 if there is none.
func tagEnd(s, open string) int {
	closer := map[string]string{"{{": "}}", "{%": "%}", "{#": "#}"}[open]
	if open == "{#" {
		if j := strings.Index(s, closer); j >= 0 {
			return j
		}
		return -1
	}
	for j := 0; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\'' || c == '"':
			k := stringEnd(s, j)
			if k < 0 {
				return -1
			}
			j = k
		case strings.HasPrefix(s[j:], "-"+closer):
			return j
		case strings.HasPrefix(s[j:], closer):
			return j
		}
	}
	return -1
}

// stringEnd is the index of the quote closing the string literal that
// starts at s[i], or −1.
func stringEnd(s string, i int) int {
	q := s[i]
	for k := i + 1; k < len(s); k++ {
		switch s[k] {
		case '\\':
			k++
		case q:
			return k
		}
	}
	return -1
}

// liftTag rewrites the body of one tag (between opener and closer, with
// its whitespace-control marks): an output's expression or a set's value.
func liftTag(open, body string) string {
	lead, expr, trail := splitMarks(body)
	switch open {
	case "{{":
		if lifted, ok := liftExpr(expr); ok {
			return lead + " " + lifted + " " + trail
		}
	case "{%":
		rest, ok := strings.CutPrefix(strings.TrimLeft(expr, " \t\n"), "set ")
		eq := topLevelIndex(rest, "=")
		if !ok || eq < 0 {
			return body
		}
		if lifted, ok := liftExpr(rest[eq+1:]); ok {
			return lead + " set " + rest[:eq+1] + " " + lifted + " " + trail
		}
	}
	return body
}

// splitMarks splits a tag body into its leading mark ("-", "+" or ""),
// the expression, and its trailing mark.
func splitMarks(body string) (lead, expr, trail string) {
	expr = body
	if strings.HasPrefix(expr, "-") || strings.HasPrefix(expr, "+") {
		lead, expr = expr[:1], expr[1:]
	}
	if strings.HasSuffix(expr, "-") {
		trail, expr = "-", expr[:len(expr)-1]
	}
	return lead, expr, trail
}

// liftExpr turns an expression with one parenthesized inline if into
// `(E[A]) if (C) else (E[B])`; ok is false when it has none, more than
// one inline if of any kind, or the group is a tuple (`(A if C else B,
// D)`: lifting would move D into one branch). Linear in expr.
func liftExpr(expr string) (string, bool) {
	expr = strings.TrimSpace(expr)
	if countIfs(expr) != 1 {
		return "", false
	}
	groups, top := keywordGroups(expr)
	if top || len(groups) != 1 {
		return "", false // an inline if at the top already, or none to lift
	}
	found := groups[0]
	inner := expr[found[0]+1 : found[1]]
	kw := keywordsAt(inner)
	if len(kw) != 2 || inner[kw[0]:kw[0]+2] != "if" || inner[kw[1]:kw[1]+4] != "else" || topLevelIndex(inner, ",") >= 0 {
		return "", false
	}
	a, c, alt := inner[:kw[0]], inner[kw[0]+2:kw[1]], inner[kw[1]+4:]
	with := func(x string) string { return "(" + expr[:found[0]] + "(" + x + ")" + expr[found[1]+1:] + ")" }
	return with(a) + " if (" + c + ") else " + with(alt), true
}

// keywordGroups lists, in one pass, the [open, close] indices of every
// grouping parenthesis pair of expr (not a call's: a "(" right after a
// name, ")" or "]" opens arguments) that holds the word "if" or "else"
// directly (not inside a deeper bracket), outside string literals; top
// says such a word stands outside every bracket. An unterminated string
// or an unbalanced closer gives none.
func keywordGroups(expr string) (groups [][2]int, top bool) {
	type open struct {
		at       int // −1 for a call's parenthesis or a bracket
		keywords bool
	}
	var stack []open
	balanced := true
	ok := scanExpr(expr, func(j int, c byte, w string) bool {
		switch {
		case w == "if" || w == "else":
			if len(stack) == 0 {
				top = true
			} else {
				stack[len(stack)-1].keywords = true
			}
		case c == '(' && !callParen(expr[:j]):
			stack = append(stack, open{at: j})
		case depthStep(c) > 0:
			stack = append(stack, open{at: -1})
		case depthStep(c) < 0:
			if balanced = len(stack) > 0; !balanced {
				return false
			}
			if o := stack[len(stack)-1]; o.at >= 0 && o.keywords && c == ')' {
				groups = append(groups, [2]int{o.at, j})
			}
			stack = stack[:len(stack)-1]
		}
		return true
	})
	if !ok || !balanced {
		return nil, false
	}
	return groups, top
}

// callParen says a "(" after before opens a call's arguments.
func callParen(before string) bool {
	before = strings.TrimRight(before, " \t\n")
	if before == "" {
		return false
	}
	c := before[len(before)-1]
	if c == ')' || c == ']' {
		return true
	}
	if !isNameByte(c) {
		return false
	}
	k := len(before)
	for k > 0 && isNameByte(before[k-1]) {
		k--
	}
	switch before[k:] { // an operator word, not a function's name
	case "if", "else", "and", "or", "not", "in", "is":
		return false
	}
	return true
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// scanExpr calls visit for every byte of expr outside string literals,
// and once for each whole name word ([A-Za-z0-9_]+) with word set (c its
// first byte); visit returning false stops the scan. It reports false for
// an unterminated string literal met before the scan stopped.
func scanExpr(expr string, visit func(j int, c byte, word string) bool) bool {
	for j := 0; j < len(expr); j++ {
		c, word := expr[j], ""
		switch {
		case c == '\'' || c == '"':
			k := stringEnd(expr, j)
			if k < 0 {
				return false
			}
			j = k
			continue
		case isNameByte(c):
			k := j
			for k < len(expr) && isNameByte(expr[k]) {
				k++
			}
			word = expr[j:k]
			j = k - 1
		}
		if !visit(j+1-max(len(word), 1), c, word) {
			return true
		}
	}
	return true
}

// depthStep is +1 for an opening bracket, −1 for a closing one.
func depthStep(c byte) int {
	switch c {
	case '(', '[', '{':
		return 1
	case ')', ']', '}':
		return -1
	}
	return 0
}

// keywordsAt lists the offsets of the words "if" and "else" at nesting
// depth 0 of expr, outside string literals.
func keywordsAt(expr string) []int {
	var out []int
	d := 0
	if !scanExpr(expr, func(j int, c byte, w string) bool {
		if d == 0 && (w == "if" || w == "else") {
			out = append(out, j)
		}
		d += depthStep(c)
		return true
	}) {
		return nil
	}
	return out
}

// countIfs counts the word "if" at any depth of expr, outside strings.
func countIfs(expr string) int {
	n := 0
	if !scanExpr(expr, func(_ int, _ byte, w string) bool {
		if w == "if" {
			n++
		}
		return true
	}) {
		return 0
	}
	return n
}

// topLevelIndex is the index of sub in s outside string literals and
// brackets, or −1.
func topLevelIndex(s, sub string) int {
	at, d := -1, 0
	if !scanExpr(s, func(j int, c byte, w string) bool {
		if d == 0 && w == "" && strings.HasPrefix(s[j:], sub) {
			at = j
			return false
		}
		d += depthStep(c)
		return true
	}) {
		return -1
	}
	return at
}
