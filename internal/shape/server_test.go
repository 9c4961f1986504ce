package shape

import (
	"testing"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// TestServerFit: with a calibrated tokenizer, a chat prompt is fitted so
// that the calibration's count (template tokens + words + a trimmed
// first word's extra) is the intended length, whatever the first word;
// without room, one word; an uncalibrated structure is an error.
func TestServerFit(t *testing.T) {
	words := Candidates()[:80]
	bare := make([]int, len(words))
	for i := range bare {
		bare[i] = 1 + i%3 // most words count more bare: the fit must pick or compensate
	}
	cal := tokenizer.NewCalibrated(tokenizer.Calibration{Words: words, Bare: bare, Trims: true,
		Overhead: map[string]int{"user": 30, "system+user": 41}})
	s, err := NewSynth(cal)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Fits() || s.Template() != nil {
		t.Fatal("a calibrated synthesizer does not fit")
	}
	cases := []struct {
		name string
		msgs []chattemplate.Message
		n    int
		want int
		ok   bool
	}{
		{"user", []chattemplate.Message{{Role: "user"}}, 500, 500, true},
		{"user short", []chattemplate.Message{{Role: "user"}}, 32, 32, true},
		{"system and user", []chattemplate.Message{{Role: "system", Content: s.Block(3, 64)}, {Role: "user"}}, 1000, 1000, true},
		{"no room", []chattemplate.Message{{Role: "user"}}, 10, 31, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(20) {
				got, ok, err := s.FitChat(tc.msgs, tc.n, seed)
				if err != nil || ok != tc.ok || (tc.ok && got != tc.want) {
					t.Fatalf("seed %d: %d %v %v, want %d %v", seed, got, ok, err, tc.want, tc.ok)
				}
				if n, err := s.CountChat(tc.msgs); err != nil || n != got {
					t.Fatalf("seed %d: CountChat %d %v, FitChat %d", seed, n, err, got)
				}
			}
		})
	}
	if _, _, err := s.FitChat([]chattemplate.Message{{Role: "assistant"}, {Role: "user"}}, 100, 1); err == nil {
		t.Error("an uncalibrated structure fitted")
	}
	if _, err := s.CountChat([]chattemplate.Message{{Role: "user", Content: "not synthesized"}}); err == nil {
		t.Error("text the calibration cannot count counted")
	}
}
