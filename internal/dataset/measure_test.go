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

// TestLimitCountsUsableConversations: the limit keeps the first usable
// conversations, however many skipped ones come between them and however
// the batches fall.
func TestLimitCountsUsableConversations(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 3000 {
		if i > 0 {
			b.WriteString(",")
		}
		if i%2 == 0 { // empty: skipped
			b.WriteString(`{"conversations": []}`)
			continue
		}
		fmt.Fprintf(&b, `{"conversations": [{"from": "human", "value": "q%d"}]}`, i)
	}
	b.WriteString("]")
	tok := tokenizer.Default()
	for _, limit := range []int{5, measureBatch - 1, measureBatch + 3} {
		got, err := parseShareGPT(strings.NewReader(b.String()), "sg.json", tok, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != limit || got[0].Turns[0].Text != "q1" || got[limit-1].Turns[0].Text != fmt.Sprintf("q%d", 2*limit-1) {
			t.Fatalf("limit %d: %d conversations from %q to %q; want the first %d usable ones", limit, len(got), got[0].Turns[0].Text, got[len(got)-1].Turns[0].Text, limit)
		}
	}
	var lines strings.Builder
	for i := range 40 {
		fmt.Fprintf(&lines, "{\"prompt\": \"p%d\"}\n", i)
	}
	if got, err := parseJSONLPrompts(strings.NewReader(lines.String()), "p.jsonl", tok, 7); err != nil || len(got) != 7 || got[6].Turns[0].Text != "p6" {
		t.Fatalf("JSONL limit 7: %d conversations, %v", len(got), err)
	}
}
