package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFiles(t *testing.T) {
	cases := []struct {
		name string
		file string
		want string // error substring; "" = written
	}{
		{"plain", "events.jsonl", ""},
		{"directory", "../events.jsonl", "plain file name"},
		{"nested", "a/b.jsonl", "plain file name"},
		{"hidden", ".x", "plain file name"},
		{"empty", "", "plain file name"},
		{"reserved", "run.json", "reserved"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := WriteFiles(dir, []File{{Name: tc.file, Data: []byte("x\n")}})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v; want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, tc.file)); string(b) != "x\n" {
				t.Fatalf("content %q", b)
			}
		})
	}
}
