package dataset

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

// TestShareGPTMeasuredInBatches: a file of several measuring batches,
// counted on every core, gives each conversation the lengths a plain
// sequential count gives, in file order: assistant messages before the
// first question ignored, an empty conversation skipped, a trailing empty
// turn dropped, an empty answer not taken for the turn's length (the next
// one is).
func TestShareGPTMeasuredInBatches(t *testing.T) {
	type msg struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	tok := tokenizer.Default()
	var recs []map[string][]msg
	var want []Conversation
	for i := range 2*measureBatch + 300 {
		q, a := fmt.Sprintf("question %d %s", i, strings.Repeat("why ", i%37)), fmt.Sprintf("answer %s%d", strings.Repeat("because ", i%53), i)
		switch i % 5 {
		case 0: // gpt first: the message before the first question is no answer
			recs = append(recs, map[string][]msg{"conversations": {{"gpt", a}, {"human", q}}})
			want = append(want, Conversation{Turns: []Turn{{Text: q, Input: tok.Count(q)}}})
		case 1: // an empty answer, then the real one
			recs = append(recs, map[string][]msg{"conversations": {{"human", q}, {"gpt", ""}, {"gpt", a}}})
			want = append(want, Conversation{Turns: []Turn{{Text: q, Input: tok.Count(q), Output: tok.Count(a)}}})
		case 2: // a trailing empty question
			recs = append(recs, map[string][]msg{"conversations": {{"system", "be brief"}, {"human", q}, {"gpt", a}, {"human", ""}}})
			want = append(want, Conversation{Turns: []Turn{{Text: q, Input: tok.Count(q), Output: tok.Count(a)}}})
		case 3: // two turns, the second unanswered
			recs = append(recs, map[string][]msg{"conversations": {{"human", q}, {"gpt", a}, {"human", a}}})
			want = append(want, Conversation{Turns: []Turn{{Text: q, Input: tok.Count(q), Output: tok.Count(a)}, {Text: a, Input: tok.Count(a)}}})
		default: // empty: skipped
			recs = append(recs, map[string][]msg{"conversations": {}})
		}
	}
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePrompts(strings.NewReader(string(b)), "sg.json", ShareGPT, tok)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d conversations, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("conversation %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
