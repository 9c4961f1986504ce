package aggregate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ignoredKeys are the run_config keys that do not change what a run
// measures (or are the backend itself).
var ignoredKeys = []string{"output_dir", "repeat", "backend", "ray"}

// ConfigDiff lists the keys of two run_config documents whose values
// differ, as "key: a ≠ b" in key order (at most 12, then a count);
// output_dir, repeat, backend and ray are left out.
func ConfigDiff(a, b json.RawMessage) []string {
	fa, fb := Flat(a), Flat(b)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if fa[k] == fb[k] {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s ≠ %s", k, orNone(fa[k]), orNone(fb[k])))
	}
	if len(out) > 12 {
		out = append(out[:12], fmt.Sprintf("and %d more", len(out)-12))
	}
	return out
}

func decode(b json.RawMessage) any {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

// flatten writes every leaf of v under its dotted key.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(key, c, out)
		}
	default:
		b, _ := json.Marshal(x)
		s := string(b)
		if len(s) > 60 {
			s = s[:57] + "…"
		}
		out[prefix] = s
	}
}

func orNone(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// Flat is a run_config document flattened into dotted keys and their
// JSON values (each cut at 60 characters), without the keys ConfigDiff
// leaves out: for naming what differs between configurations.
func Flat(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	flatten("", decode(raw), out)
	for k := range out {
		if slices.Contains(ignoredKeys, strings.SplitN(k, ".", 2)[0]) {
			delete(out, k)
		}
	}
	return out
}
