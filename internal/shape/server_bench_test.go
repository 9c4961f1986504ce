package shape

import (
	"testing"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// BenchmarkServerFit is what tokenizer: server costs a request on the
// send path: a 1,000-token chat prompt after a 64-token system prompt
// fitted to the calibrated count (no tokenizer, no template, no request).
func BenchmarkServerFit(b *testing.B) {
	words := Candidates()
	bare := make([]int, len(words))
	for i := range bare {
		bare[i] = 1 + i%2
	}
	cal := tokenizer.NewCalibrated(tokenizer.Calibration{Words: words, Bare: bare, Trims: true,
		Overhead: map[string]int{"user": 30, "system+user": 41}})
	s, err := NewSynth(cal)
	if err != nil {
		b.Fatal(err)
	}
	sys := s.Block(1, 64)
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		msgs := []chattemplate.Message{{Role: "system", Content: sys}, {Role: "user"}}
		if n, ok, err := s.FitChat(msgs, 1105, seed); err != nil || !ok || n != 1105 {
			b.Fatal(n, ok, err)
		}
		seed++
	}
}
