package stack_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/sagebench/sagebench/internal/stack"
)

// TestProfileEngineSlots: a profile LLM engine's slots caps its running
// batch (the gateway queues the rest), in the config and through
// POST /admin/engines; 0 keeps the profile's max_num_seqs.
func TestProfileEngineSlots(t *testing.T) {
	cfg := stack.DefaultConfig()
	cfg.Index.Size = 50
	cfg.Engines = []stack.EngineConfig{
		{ID: "llm-0", Kind: "llm", Profile: "llama3.1-8b-h100", Slots: 3},
		{ID: "llm-1", Kind: "llm", Profile: "llama3.1-8b-h100"},
		{ID: "embed-0", Kind: "embedding", Profile: "bge-small-cpu"},
	}
	s := startStack(t, cfg, stack.Options{})
	if resp, body := post(t, s.URL()+"/admin/engines", `{"id":"llm-2","kind":"llm","profile":"llama3.1-8b-h100","slots":5}`); resp.StatusCode != 201 {
		t.Fatalf("add engine: %d %s", resp.StatusCode, body)
	}
	resp, err := http.Get(s.URL() + "/admin/engines")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var list struct {
		Data []struct {
			ID    string `json:"id"`
			Slots int    `json:"slots"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want := map[string]int{"llm-0": 3, "llm-1": 256, "llm-2": 5}
	for _, e := range list.Data {
		if w, ok := want[e.ID]; ok && e.Slots != w {
			t.Errorf("%s: %d slots, want %d", e.ID, e.Slots, w)
		}
	}
}
