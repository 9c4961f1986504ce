package chattemplate

import (
	"strings"
	"testing"
	"time"
)

// TestLiftInlineIfs: the rewrite of a tag with one parenthesized inline
// if, and what it leaves alone.
func TestLiftInlineIfs(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"gemma3", `{{ '<s>' + role + '\n' + (p if loop.first else "") }}`,
			`{{ ('<s>' + role + '\n' + (p )) if ( loop.first ) else ('<s>' + role + '\n' + ( "")) }}`},
		{"trim marks", `{{- a ~ (b if c else d) -}}`, `{{- (a ~ (b )) if ( c ) else (a ~ ( d)) -}}`},
		{"set", `{% set x = 'k' + (y if z else 'w') %}`, `{% set x = ('k' + (y )) if ( z ) else ('k' + ( 'w')) %}`},
		{"with a filter", `{{ (a if b else c) | trim }}`, `{{ ((a ) | trim) if ( b ) else (( c) | trim) }}`},
		{"no inline if", `{{ a + (b) }}{% if (x) %}y{% endif %}`, `{{ a + (b) }}{% if (x) %}y{% endif %}`},
		{"top-level if", `{{ a if b else c }}`, `{{ a if b else c }}`},
		{"two", `{{ (a if b else c) + (d if e else f) }}`, `{{ (a if b else c) + (d if e else f) }}`},
		{"nested", `{{ x + (a if b else (c if d else e)) }}`, `{{ x + (a if b else (c if d else e)) }}`},
		{"call argument", `{{ f(a if b else c) }}`, `{{ f(a if b else c) }}`},
		{"in a string", `{{ x + ('if' ~ ' else') }} {{ "}} (a if b else c)" }}`, `{{ x + ('if' ~ ' else') }} {{ "}} (a if b else c)" }}`},
		{"comment", `{# (a if b else c) #}{{ 1 }}`, `{# (a if b else c) #}{{ 1 }}`},
		{"if block", `{% if (a if b else c) %}{% endif %}`, `{% if (a if b else c) %}{% endif %}`},
		{"unterminated", `{{ x + (a if b else c)`, `{{ x + (a if b else c)`},
		{"no else", `{{ x + (a if b) }}`, `{{ x + (a if b) }}`},
		{"a tuple", `{{ ('a' if x else 'b', 'c') | length }}`, `{{ ('a' if x else 'b', 'c') | length }}`},
		{"in a tuple", `{% set ok = r in ('user' if s else 'human', 'assistant') %}`, `{% set ok = r in ('user' if s else 'human', 'assistant') %}`},
		{"deep inside groups", `{{ x + (((a if b else c))) }}`, `{{ (x + (((a )))) if ( b ) else (x + ((( c)))) }}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := liftInlineIfs(tc.in); got != tc.want {
				t.Errorf("liftInlineIfs(%q)\n = %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestInlineIfRenders: templates gonja refuses as written render, after
// the rewrite, what Jinja renders (values worked out by hand).
func TestInlineIfRenders(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"output", `{% for m in messages %}{{ '[' + m.role + ':' + (m.content | upper if loop.first else m.content) + ']' }}{% endfor %}`, "[user:HI][assistant:yo]"},
		{"set", `{% set p = 'n=' ~ (messages | length if messages else 0) %}{{ p }}`, "n=2"},
		{"filter after", `{{ ('  x  ' if add_generation_prompt else 'y') | trim }}!`, "x!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := compile(tc.src); err == nil {
				t.Fatalf("gonja parses %q as it is: the case tests nothing", tc.src)
			}
			tpl, err := Parse(tc.name, tc.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Render([]Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "yo"}}, true)
			if err != nil || got != tc.want {
				t.Fatalf("rendered %q (%v), want %q", got, err, tc.want)
			}
		})
	}
	if _, err := Parse("two", `{{ (a if b else c) + (d if e else f) }}`, Options{}); err == nil || !strings.Contains(err.Error(), "parenthesis") {
		t.Fatalf("two inline ifs: %v, want gonja's parse error", err)
	}
}

// TestLiftInlineIfsLinear: the rewrite is one pass over a tag, however
// deep its parentheses nest (it was quadratic: tens of seconds on a
// crafted file), and Parse refuses brackets nested deeper than gonja's
// parser can recurse.
func TestLiftInlineIfsLinear(t *testing.T) {
	n := 1 << 17
	src := "{{ 1 + }}{{ " + strings.Repeat("(", n) + "x if y else z" + strings.Repeat(")", n) + " }}"
	start := time.Now()
	liftInlineIfs(src)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("liftInlineIfs took %v on %d nested parentheses", d, n)
	}
	if _, err := Parse("deep", src, Options{}); err == nil || !strings.Contains(err.Error(), "brackets nest 131072 deep; at most 256") {
		t.Fatalf("Parse of %d nested parentheses: %v", n, err)
	}
}
