package tokenizer

import (
	"slices"
	"testing"
)

func TestCalibrated(t *testing.T) {
	c := NewCalibrated(Calibration{Words: []string{"the", "of", "river"}, Bare: []int{1, 1, 2}, Trims: true,
		Overhead: map[string]int{"user": 7, "system+user": 12}})
	cases := []struct {
		name  string
		text  string
		known bool
		count int
		lead  int
	}{
		{"empty", "", true, 0, 0},
		{"one word", " the", true, 1, 0},
		{"a word two tokens bare first", " river of the", true, 3, 1},
		{"no leading space", "the of", false, 0, 0},
		{"two spaces", " the  of", false, 0, 0},
		{"trailing space", " the ", false, 0, 0},
		{"another word", " the cat", false, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, ok := c.Known(tc.text)
			if ok != tc.known || n != tc.count {
				t.Errorf("Known(%q) = %d, %v; want %d, %v", tc.text, n, ok, tc.count, tc.known)
			}
			if tc.known && c.Lead(tc.text) != tc.lead {
				t.Errorf("Lead(%q) = %d, want %d", tc.text, c.Lead(tc.text), tc.lead)
			}
			if tc.known && (c.Count(tc.text) != tc.count || len(c.Encode(tc.text)) != tc.count) {
				t.Errorf("Count %d, Encode %v", c.Count(tc.text), c.Encode(tc.text))
			}
		})
	}
	if c.Misses() != 0 {
		t.Fatalf("%d misses on calibrated text", c.Misses())
	}
	if c.Count(" the cat"); c.Misses() != 1 {
		t.Errorf("a text that is not calibrated is not counted as a miss")
	}
	if n, ok := c.ChatOverhead([]string{"system", "user"}); !ok || n != 12 {
		t.Errorf("overhead %d %v", n, ok)
	}
	if _, ok := c.ChatOverhead([]string{"user", "assistant", "user"}); ok {
		t.Error("an uncalibrated structure has an overhead")
	}
	if got := c.Encode(" river the"); !slices.Equal(got, []int{2, 0}) {
		t.Errorf("Encode %v", got)
	}
	if _, err := ServerRef(nil).Get(); err != ErrNotCalibrated {
		t.Errorf("uncalibrated Get: %v", err)
	}
	if got, _ := ServerRef(c).Get(); got != Tokenizer(c) || RefFor(ServerSpec).Spec() != ServerSpec || RefFor("").Spec() != "" {
		t.Error("refs")
	}
}

// FuzzCalibratedKnown: any text is Known with a count that Encode and
// Count agree on, or not Known (a miss); never a panic.
func FuzzCalibratedKnown(f *testing.F) {
	for _, s := range []string{"", " the of", "the", " the  of", " of ", " river", "\xff the"} {
		f.Add(s)
	}
	c := NewCalibrated(Calibration{Words: []string{"the", "of", "river"}, Bare: []int{1, 1, 2}, Trims: true})
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := c.Known(s)
		if !ok {
			return
		}
		if n < 0 || c.Count(s) != n || len(c.Encode(s)) != n || c.Lead(s) < 0 {
			t.Fatalf("%q: Known %d, Count %d, Encode %v, Lead %d", s, n, c.Count(s), c.Encode(s), c.Lead(s))
		}
	})
}
