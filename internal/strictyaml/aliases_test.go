package strictyaml

import (
	"errors"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/strictyaml/yamltest"
)

func TestAliasBudget(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want error
	}{
		{"shared blocks", "slo: &s {ttft: 1s, e2e: 2s}\na: {<<: *s}\nb: *s\nc: [*s, *s]\n", nil},
		{"3 levels of aliases (12k nodes)", yamltest.AliasBomb("x:", 3, false), nil},
		{"7 levels of aliases", yamltest.AliasBomb("x:", 7, false), ErrAliasBomb},
		{"7 levels of merge keys", yamltest.AliasBomb("x:", 7, true), ErrAliasBomb},
		{"60 levels of merge keys", yamltest.AliasBomb("x:", 60, true), ErrAliasBomb},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			var v any
			err := Unmarshal([]byte(tc.doc), &v)
			if took := time.Since(start); tc.want != nil && took > time.Second {
				t.Errorf("refused in %v, want under 1 s", took)
			}
			if !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
				t.Fatalf("Unmarshal: %v, want %v", err, tc.want)
			}
			if _, err := Parse([]byte(tc.doc)); !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
				t.Fatalf("Parse: %v, want %v", err, tc.want)
			}
		})
	}
}
