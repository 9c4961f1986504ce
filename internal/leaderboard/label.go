package leaderboard

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/aggregate"
)

// labelKeys are run_config keys a label leaves out: shown in columns of
// their own (backend, nodes, parallelism), in the label's words (the
// Q, its scale) or irrelevant to what a run measures.
var labelKeys = []string{"experiment", "quick", "nodes", "parallelism", "nats_url", "pacer", "target"}

// maxLabelKeys bounds the differing keys a label names.
const maxLabelKeys = 4

// setLabels names each entry: its Q, its scale and the run_config keys
// whose values differ between the entries of that Q (read from each
// entry's first run.json), then its configuration of a run (Q4's
// engines=2). An entry whose run.json cannot be read is named by its
// config hash.
func setLabels(entries []Entry, configs map[string]json.RawMessage) {
	flats := make([]map[string]string, len(entries))
	for i, e := range entries {
		if raw, ok := configs[e.RunIDs[0]]; ok {
			flats[i] = aggregate.Flat(raw)
			entries[i].Scale = scaleOf(raw)
		}
	}
	for i := range entries {
		e := &entries[i]
		parts := []string{e.Workload}
		if e.Scale != "" {
			parts = append(parts, e.Scale)
		}
		if flats[i] == nil {
			parts = append(parts, "config "+short(e.ConfigHash))
		} else {
			parts = append(parts, differingKeys(entries, flats, i)...)
		}
		if e.Config != "" {
			parts = append(parts, e.Config)
		}
		e.Label = strings.Join(parts, " ")
	}
	// Entries the keys cannot tell apart (a run.json not found) keep
	// their config hash in the label.
	seen := map[string]int{}
	for _, e := range entries {
		seen[e.Workload+"\x00"+e.Backend+"\x00"+e.Label]++
	}
	for i := range entries {
		e := &entries[i]
		if seen[e.Workload+"\x00"+e.Backend+"\x00"+e.Label] > 1 && !strings.Contains(e.Label, "config ") {
			e.Label += " config " + short(e.ConfigHash)
		}
	}
}

// differingKeys lists "key=value" for the keys of entry i whose values
// differ among the entries of its workload.
func differingKeys(entries []Entry, flats []map[string]string, i int) []string {
	keys := map[string]bool{}
	for j := range entries {
		if entries[j].Workload != entries[i].Workload || flats[j] == nil {
			continue
		}
		for k, v := range flats[j] {
			if flats[i][k] != v {
				keys[k] = true
			}
		}
		for k := range flats[i] {
			if _, ok := flats[j][k]; !ok {
				keys[k] = true
			}
		}
	}
	prefix := strings.ToLower(entries[i].Workload) + "."
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if slices.Contains(labelKeys, strings.SplitN(k, ".", 2)[0]) || strings.HasPrefix(k, prefix+"target.") {
			continue
		}
		v, ok := flats[i][k]
		if !ok {
			v = "–"
		}
		out = append(out, strings.TrimPrefix(k, prefix)+"="+strings.Trim(v, `"`))
	}
	if len(out) > maxLabelKeys {
		out = append(out[:maxLabelKeys], fmt.Sprintf("+%d more", len(out)-maxLabelKeys))
	}
	return out
}

// scaleOf is "quick" or "full" from run_config.quick ("" when absent).
func scaleOf(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	switch m["quick"] {
	case true:
		return "quick"
	case false:
		return "full"
	}
	return ""
}
