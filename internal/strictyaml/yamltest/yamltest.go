// Package yamltest builds the hostile YAML documents tests of the YAML
// bounds share.
package yamltest

import (
	"fmt"
	"strings"
)

// AliasBomb is a "billion laughs" document of levels levels (~10× per
// level) as the entries of a list under key (a "key:" line, or a deeper
// path such as "q2:\n  policies:"): plain aliases of sequences, or merge
// keys of mappings (which goccy/go-yaml copies at every use; a strict
// decoder expands them before it finds the entries of the wrong type).
func AliasBomb(key string, levels int, merge bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", key)
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
