package runconfig

import (
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/sagebench/sagebench/internal/workload"
)

// Has reports whether the file sets the key at the dotted path (e.g.
// "q3.aggressor.max_concurrent"); false for no file.
func (f *File) Has(path string) bool {
	if f == nil || len(f.src) == 0 {
		return false
	}
	return find(f.src, func(mv *ast.MappingValueNode) *token.Token {
		if nodePath(mv) == path {
			return mv.Key.GetToken()
		}
		return nil
	}) != ""
}

// StackOnlySet lists the keys f sets that configure the embedded
// reference stack only (target.stack_config, the Q's StackOnlyKeys): a
// run against a URL target ignores them and says so. Nil for the
// embedded target.
func StackOnlySet(r Resolved, f *File) []string {
	if r.Shared.Target.IsEmbedded() {
		return nil
	}
	keys := []string{"target.stack_config"}
	if so, ok := r.Workload.Config().(workload.StackOnly); ok {
		keys = append(keys, so.StackOnlyKeys()...)
	}
	var set []string
	for _, k := range keys {
		if f.Has(k) {
			set = append(set, k)
		}
	}
	return set
}
