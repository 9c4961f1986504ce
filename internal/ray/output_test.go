package ray_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/ray"
)

func TestParseOutput(t *testing.T) {
	tests := []struct {
		name    string
		logs    string
		records int
		done    bool
		meta    bool
		err     string
	}{
		{"complete", "boot\nSAGEBENCH_META {\"ray_version\":\"2.52.0\",\"start_unix_ns\":5}\nSAGEBENCH_RECORD {\"id\":\"a\"}\nSAGEBENCH_RECORD {\"id\":\"b\"}\nSAGEBENCH_DONE {\"records\":2}\n", 2, true, true, ""},
		{"prefixed lines", "(driver) SAGEBENCH_RECORD {\"id\":\"a\"}\nSAGEBENCH_DONE {\"records\":1}", 1, true, false, ""},
		{"cut short", "SAGEBENCH_RECORD {\"id\":\"a\"}\n", 1, false, false, ""},
		{"count differs", "SAGEBENCH_RECORD {\"id\":\"a\"}\nSAGEBENCH_DONE {\"records\":3}\n", 1, false, false, ""},
		{"bad record", "x\nSAGEBENCH_RECORD {\"id\":\n", 0, false, false, "line 2"},
		{"record not an object", "SAGEBENCH_RECORD [1]\n", 0, false, false, "line 1"},
		{"bad meta", "SAGEBENCH_META nope\n", 0, false, false, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ray.ParseOutput(tt.logs)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || len(out.Records) != tt.records || out.Done != tt.done || (out.Meta != nil) != tt.meta {
				t.Fatalf("ParseOutput = %+v, %v", out, err)
			}
			if strings.Contains(out.Tail, "SAGEBENCH_") {
				t.Fatalf("Tail keeps marked lines: %q", out.Tail)
			}
		})
	}
}

// FuzzParseOutput: any log parses without panicking, keeps only JSON
// objects as records, and parses the same when it arrives in two pieces
// cut anywhere (as the websocket delivers it).
func FuzzParseOutput(f *testing.F) {
	f.Add("SAGEBENCH_META {}\nSAGEBENCH_RECORD {\"id\":\"a\"}\nSAGEBENCH_DONE {\"records\":1}\n", uint16(20))
	f.Add("plain\n", uint16(0))
	f.Fuzz(func(t *testing.T, logs string, cut uint16) {
		out, err := ray.ParseOutput(logs)
		ps := ray.NewParser(nil)
		k := int(cut) % (len(logs) + 1)
		ps.Write([]byte(logs[:k]))
		ps.Write([]byte(logs[k:]))
		pieces, perr := ps.Output()
		if (err == nil) != (perr == nil) || len(out.Records) != len(pieces.Records) || out.Done != pieces.Done || out.Tail != pieces.Tail {
			t.Fatalf("whole: %d records, done %v, %v; in pieces cut at %d: %d records, done %v, %v",
				len(out.Records), out.Done, err, k, len(pieces.Records), pieces.Done, perr)
		}
		if err != nil {
			return
		}
		for _, r := range out.Records {
			if len(r) == 0 || r[0] != '{' {
				t.Fatalf("record %q is not an object", r)
			}
		}
	})
}

// TestParserInPieces: a log written in pieces that split lines anywhere
// parses as the whole; unmarked lines go to Other, the last TailLines of
// them into Tail.
func TestParserInPieces(t *testing.T) {
	var logs strings.Builder
	for i := range 30 {
		fmt.Fprintf(&logs, "line %d\n%s{\"id\":\"%d\"}\n", i, ray.MarkRecord, i)
	}
	logs.WriteString(ray.MarkDone + `{"records":30}` + "\nlast, without newline")
	var other bytes.Buffer
	ps := ray.NewParser(&other)
	for rest := logs.String(); rest != ""; {
		k := min(len(rest), 7)
		ps.Write([]byte(rest[:k]))
		rest = rest[k:]
	}
	out, err := ps.Output()
	if err != nil || len(out.Records) != 30 || !out.Done {
		t.Fatalf("Output = %d records, done %v, %v", len(out.Records), out.Done, err)
	}
	if strings.Contains(other.String(), "SAGEBENCH_") || !strings.HasPrefix(other.String(), "line 0\nline 1\n") {
		t.Fatalf("Other got %q", other.String())
	}
	tail := strings.Split(out.Tail, "\n")
	if len(tail) != ray.TailLines || tail[0] != "line 11" || tail[len(tail)-1] != "last, without newline" {
		t.Fatalf("Tail %q: want the last %d unmarked lines", out.Tail, ray.TailLines)
	}
}
