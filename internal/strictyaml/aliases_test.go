package strictyaml

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// AliasBomb is a "billion laughs" document of levels levels, ~10× per
// level, under key: plain aliases of sequences, or merge keys of
// mappings (which goccy/go-yaml copies at every use).
func AliasBomb(key string, levels int, merge bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", key)
	if merge {
		b.WriteString("  - &m0 {k0: 1, k1: 2, k2: 3, k3: 4, k4: 5, k5: 6, k6: 7, k7: 8, k8: 9, k9: 10}\n")
		for i := 1; i <= levels; i++ {
			var cs []string
			for j := range 10 {
				cs = append(cs, fmt.Sprintf("c%d: {<<: *m%d}", j, i-1))
			}
			fmt.Fprintf(&b, "  - &m%d {%s}\n", i, strings.Join(cs, ", "))
		}
		return b.String()
	}
	b.WriteString("  - &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  - &a%d [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	return b.String()
}

func TestAliasBudget(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want error
	}{
		{"shared blocks", "slo: &s {ttft: 1s, e2e: 2s}\na: {<<: *s}\nb: *s\nc: [*s, *s]\n", nil},
		{"3 levels of aliases (12k nodes)", AliasBomb("x", 3, false), nil},
		{"7 levels of aliases", AliasBomb("x", 7, false), ErrAliasBomb},
		{"7 levels of merge keys", AliasBomb("x", 7, true), ErrAliasBomb},
		{"60 levels of merge keys", AliasBomb("x", 60, true), ErrAliasBomb},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			var v any
			err := Unmarshal([]byte(tc.doc), &v)
			if took := time.Since(start); tc.want != nil && took > time.Second {
				t.Errorf("refused in %v, want under 1 s", took)
			}
			if !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
				t.Fatalf("Unmarshal: %v, want %v", err, tc.want)
			}
			if _, err := Parse([]byte(tc.doc)); !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
				t.Fatalf("Parse: %v, want %v", err, tc.want)
			}
		})
	}
}
