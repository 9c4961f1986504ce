package openai

import "testing"

func TestWarmConns(t *testing.T) {
	cases := []struct {
		name string
		rate float64
		want int
	}{
		{"idle load keeps the floor", 0, 4},
		{"low rate keeps the floor", 20, 4},
		{"rate times 50 ms", 5000, 250},
		{"rounded up", 101, 6},
		{"capped", 100000, 256},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := WarmConns(c.rate); got != c.want {
				t.Errorf("WarmConns(%v) = %d, want %d", c.rate, got, c.want)
			}
		})
	}
}
