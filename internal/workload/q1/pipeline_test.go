package q1

import (
	"strings"
	"testing"
)

// TestReadPipeline: pipeline.json is read strictly: its rows one per
// transaction in order, no more ids than k.
func TestReadPipeline(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // "" = read
	}{
		{"empty run", `{"k":5,"rows":[]}`, ""},
		{"rows", `{"k":2,"rows":[{"seq":0,"queue_ms":[1,2,3],"operator_ms":0.1,"sink_ms":0.2,"source_doc":7,"retrieved":[7,3],"exact":[7,4]},{"seq":4,"operator_ms":0,"sink_ms":0,"source_doc":1,"retrieved":[]}]}`, ""},
		{"not measurable", `{"k":5,"recall_not_measurable":"an external target","dropped":3,"rows":[]}`, ""},
		{"k 0", `{"k":0,"rows":[]}`, "want k in [1, 1000]"},
		{"negative dropped", `{"k":5,"dropped":-1,"rows":[]}`, "dropped"},
		{"unknown field", `{"k":5,"rows":[],"vectors":[]}`, `unknown field "vectors"`},
		{"duplicate row", `{"k":5,"rows":[{"seq":1,"retrieved":[]},{"seq":1,"retrieved":[]}]}`, "row 1: seq 1"},
		{"rows out of order", `{"k":5,"rows":[{"seq":2,"retrieved":[]},{"seq":1,"retrieved":[]}]}`, "in order"},
		{"negative seq", `{"k":5,"rows":[{"seq":-1,"retrieved":[]}]}`, "seq -1"},
		{"more ids than k", `{"k":1,"rows":[{"seq":0,"retrieved":[1,2]}]}`, "at most k = 1"},
		{"not JSON", `{"k":5,"rows":[`, "pipeline.json"},
		{"two documents", `{"k":5,"rows":[]}{"k":5,"rows":[]}`, "trailing data"},
		{"a stray bracket after it", `{"k":5,"rows":[]}]`, "trailing data"},
		{"a stray brace after it", `{"k":5,"rows":[]} }`, "trailing data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readPipeline([]byte(tc.in))
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("readPipeline: %v; want %q", err, tc.want)
			}
		})
	}
}

// FuzzReadPipeline: any bytes are read or refused, never a panic; what
// is read survives being written and read again unchanged, and its
// recall is a metric in one of its states.
func FuzzReadPipeline(f *testing.F) {
	f.Add([]byte(`{"k":2,"rows":[{"seq":0,"queue_ms":[1,2,3],"operator_ms":0.1,"sink_ms":0.2,"source_doc":7,"retrieved":[7,3],"exact":[7,4]}]}`))
	f.Add([]byte(`{"k":5,"recall_not_measurable":"x","dropped":2,"rows":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		pr, err := readPipeline(b)
		if err != nil {
			return
		}
		for _, m := range pr.recall() {
			if err := m.Check(); err != nil {
				t.Fatalf("recall of %s: %v", b, err)
			}
		}
		f1, err := pr.file()
		if err != nil {
			t.Fatal(err)
		}
		again, err := readPipeline(f1.Data)
		if err != nil {
			t.Fatalf("written %s, read back: %v", f1.Data, err)
		}
		f2, _ := again.file()
		if string(f1.Data) != string(f2.Data) {
			t.Fatalf("round trip changed it:\n%s\n%s", f1.Data, f2.Data)
		}
	})
}
