package ray_test

import (
	"bytes"
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
			if strings.Contains(out.Other, "SAGEBENCH_") {
				t.Fatalf("Other keeps marked lines: %q", out.Other)
			}
		})
	}
}

func FuzzParseOutput(f *testing.F) {
	f.Add("SAGEBENCH_META {}\nSAGEBENCH_RECORD {\"id\":\"a\"}\nSAGEBENCH_DONE {\"records\":1}\n")
	f.Add("plain\n")
	f.Fuzz(func(t *testing.T, logs string) {
		out, err := ray.ParseOutput(logs)
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

func TestLogFilterDropsRecords(t *testing.T) {
	var b bytes.Buffer
	f := &ray.LogFilter{W: &b}
	for _, part := range []string{"one\nSAGEBENCH_REC", "ORD {}\ntw", "o\n"} {
		f.Write([]byte(part))
	}
	if b.String() != "one\ntwo\n" {
		t.Fatalf("filtered %q", b.String())
	}
}
