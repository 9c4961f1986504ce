package load

import (
	"strings"
	"testing"
	"time"
)

func TestFineGapOf(t *testing.T) {
	cases := []struct {
		pacer string
		want  time.Duration
		err   string
	}{
		{pacer: "", want: 0},
		{pacer: PacerEfficient, want: 0},
		{pacer: PacerPrecise, want: -1},
		{pacer: "exact", err: `pacer "exact": choose efficient (default) or precise`},
	}
	for _, c := range cases {
		t.Run(c.pacer, func(t *testing.T) {
			got, err := FineGapOf(c.pacer)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("FineGapOf(%q) = %v, %v; want %v", c.pacer, got, err, c.want)
			}
		})
	}
}
