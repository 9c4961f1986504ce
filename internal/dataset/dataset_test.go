package dataset

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

func TestParseTraces(t *testing.T) {
	tests := []struct {
		name, format, body string
		want               []Entry
		err                string
	}{
		{"mooncake", Mooncake, `{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}
{"timestamp": 27000, "input_length": 10, "output_length": 0, "hash_ids": []}
`, []Entry{{0, 10, 0, []int64{}}, {482 * time.Millisecond, 6955, 52, []int64{46, 47}}}, ""},
		{"azure", Azure, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n",
			[]Entry{{0, 374, 44, nil}, {4314579 * time.Microsecond, 396, 109, nil}}, ""},
		{"burstgpt", BurstGPT, "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,GPT-4,1087,0,1087,API log\n",
			[]Entry{{0, 472, 18, nil}, {40 * time.Second, 1087, 0, nil}}, ""},
		{"mooncake missing field", Mooncake, "{\"timestamp\": 1, \"input_length\": 5}\n", nil, "t:1: field output_length: missing"},
		{"mooncake not json", Mooncake, "\n{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 1}\nnope\n", nil, "t:3: not a JSON object"},
		{"mooncake negative", Mooncake, "{\"timestamp\": -1, \"input_length\": 5, \"output_length\": 1}\n", nil, "t:1: field timestamp"},
		{"azure bad number", Azure, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47,x,1\n", nil, "t:3: field ContextTokens"},
		{"azure bad time", Azure, "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,374,44\n", nil, "t:2: field TIMESTAMP"},
		{"burstgpt missing column", BurstGPT, "Timestamp,Model,Request tokens\n5,a,3\n", nil, "t:1: field Response tokens: column missing"},
		{"empty", Mooncake, "", nil, "no requests"},
		{"unknown format", "parquet", "x", nil, "trace format \"parquet\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, err := ParseTrace(strings.NewReader(tc.body), "t", tc.format)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(es) != len(tc.want) {
				t.Fatalf("%v, %v", es, err)
			}
			for i := range es {
				w := tc.want[i]
				if es[i].At != w.At || es[i].Input != w.Input || es[i].Output != w.Output || len(es[i].HashIDs) != len(w.HashIDs) {
					t.Errorf("entry %d: %+v, want %+v", i, es[i], w)
				}
			}
		})
	}
	var e *Error
	_, err := ParseTrace(strings.NewReader("{}\n"), "t", Mooncake)
	if !errors.As(err, &e) || e.Line != 1 || e.Field != "timestamp" {
		t.Errorf("error %v is not an *Error naming line and field", err)
	}
}

func TestWindow(t *testing.T) {
	var es []Entry
	for i := range 10 {
		es = append(es, Entry{At: time.Duration(i) * time.Second, Input: i + 1})
	}
	got := Window{Start: 2 * time.Second, Duration: 5 * time.Second, Count: 4, Speedup: 2}.Apply(es)
	if len(got) != 4 || got[0].Input != 3 || got[0].At != 0 || got[3].At != 1500*time.Millisecond {
		t.Errorf("window %+v", got)
	}
}

func TestParsePrompts(t *testing.T) {
	tok := tokenizer.Default()
	share := `[
 {"id": "a", "conversations": [{"from": "human", "value": "What is a prefix cache?"}, {"from": "gpt", "value": "A cache of the KV of shared prompt prefixes."},
   {"from": "human", "value": "Why?"}, {"from": "gpt", "value": "Speed."}]},
 {"id": "b", "conversations": [{"from": "gpt", "value": "orphan"}]},
 {"id": "c", "conversations": []},
 {"id": "d", "conversations": [{"from": "system", "value": "be brief"}, {"from": "human", "value": "Hi"}]}
]`
	cs, err := ParsePrompts(strings.NewReader(share), "s.json", ShareGPT, tok)
	if err != nil || len(cs) != 2 {
		t.Fatalf("%+v, %v", cs, err)
	}
	first := cs[0].Turns
	if len(first) != 2 || first[0].Input != tok.Count("What is a prefix cache?") || first[0].Output != tok.Count("A cache of the KV of shared prompt prefixes.") || first[1].Text != "Why?" {
		t.Errorf("conversation a: %+v", first)
	}
	if cs[1].Turns[0].Text != "Hi" || cs[1].Turns[0].Output != 0 {
		t.Errorf("conversation d: %+v", cs[1])
	}
	jl := "{\"prompt\": \"Summarise the report.\", \"output_tokens\": 64}\n\n{\"prompt\": \"Translate this.\"}\n"
	cs, err = ParsePrompts(strings.NewReader(jl), "p.jsonl", Prompts, tok)
	if err != nil || len(cs) != 2 || cs[0].Turns[0].Output != 64 || cs[1].Turns[0].Input != tok.Count("Translate this.") {
		t.Fatalf("%+v, %v", cs, err)
	}
	for _, tc := range []struct{ name, format, body, want string }{
		{"sharegpt bad from", ShareGPT, "[\n{\"conversations\": [{\"from\": \"robot\", \"value\": \"x\"}]}\n]", "s:2: field [0].conversations[0].from"},
		{"sharegpt not an array", ShareGPT, "{}", "s:1: a ShareGPT file is a JSON array"},
		{"sharegpt broken", ShareGPT, "[\n{\"conversations\": [\n", "s:"},
		{"prompts missing", Prompts, "{\"prompt\": \"a\"}\n{\"text\": \"b\"}\n", "s:2: field prompt: missing"},
		{"prompts empty file", Prompts, "", "no usable prompts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePrompts(strings.NewReader(tc.body), "s", tc.format, tok)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParseTrace(f *testing.F) {
	f.Add([]byte(`{"timestamp": 1, "input_length": 5, "output_length": 1, "hash_ids": [1]}`), 0)
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n"), 1)
	f.Add([]byte("Timestamp,Model,Request tokens,Response tokens\n5,a,3,4\n"), 2)
	// values near the bound (valueBound): quoted fields over lines, a long line
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n\"2023-11-16\n18:15:46\",\"3\n\",4\n"), 1)
	f.Add([]byte("Timestamp,Request tokens,Response tokens\n1,2,"+strings.Repeat("9", 70<<10)+"\n"), 2)
	f.Fuzz(func(t *testing.T, b []byte, k int) {
		formats := TraceFormats()
		format := formats[(k%len(formats)+len(formats))%len(formats)]
		es, err := ParseTrace(strings.NewReader(string(b)), "fuzz", format)
		if err != nil {
			return
		}
		for i, e := range es {
			if e.At < 0 || e.Input < 1 || e.Output < 0 || (i > 0 && e.At < es[i-1].At) {
				t.Fatalf("entry %d: %+v", i, e)
			}
		}
	})
}

func FuzzParsePrompts(f *testing.F) {
	f.Add([]byte(`[{"conversations": [{"from": "human", "value": "hi"}]}]`), true)
	f.Add([]byte(`{"prompt": "hi"}`), false)
	f.Add([]byte("[\n{\"conversations\": [{\"from\": \"human\", \"value\": \""+strings.Repeat("ab ", 24<<10)+"\"}]},\n{}]"), true)
	tok := tokenizer.Default()
	f.Fuzz(func(t *testing.T, b []byte, share bool) {
		format := Prompts
		if share {
			format = ShareGPT
		}
		cs, err := ParsePrompts(strings.NewReader(string(b)), "fuzz", format, tok)
		if err != nil {
			return
		}
		for _, c := range cs {
			if len(c.Turns) == 0 || c.Turns[0].Input < 1 {
				t.Fatalf("conversation without a first turn: %+v", c)
			}
		}
	})
}
