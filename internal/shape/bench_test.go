package shape

import "testing"

// BenchmarkSynthesize is a request's synthesis: its lengths drawn from
// distributions and a 1,000-token prompt (memoized: a substring).
func BenchmarkSynthesize(b *testing.B) {
	s := DefaultSynth()
	sh := Shape{InputTokens: Dist{Kind: Normal, Mean: 1000, SD: 1, Min: 1000, Max: 1000}, OutputTokens: Dist{Kind: Uniform, Min: 64, Max: 256}}
	d, err := sh.Compile("bench", 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		l := d.Draw(seed)
		if p := s.Prompt(seed, l.Input); len(p) == 0 {
			b.Fatal("empty")
		}
		seed++
	}
}
