package q7

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"default", func(*Config) {}, ""},
		{"policy unnamed", func(c *Config) { c.Drill.Events[0].Policy = "" }, "q7.drill.events[0]"},
		{"bad llm ratio", func(c *Config) { c.Load.LLMRatio = 2 }, "q7.load.llm_ratio"},
		{"bad window", func(c *Config) { c.Drill.Series.Step = time.Hour }, "q7.drill.series.step"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default(true)
			tc.edit(c)
			err := c.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v; want %q", err, tc.want)
			}
		})
	}
}

// TestExcess: the windows near an event against the steady median.
func TestExcess(t *testing.T) {
	q := &q7{cfg: Default(true)}
	w := func(start time.Duration, p99 float64) series.Window {
		return series.Window{StartNS: int64(start), EndNS: int64(start + 2*time.Second), Count: 1, TTFTP99: p99}
	}
	r := &drill.Run{
		Windows: []series.Window{w(0, 100), w(2*time.Second, 110), w(4*time.Second, 100), w(10*time.Second, 400), w(16*time.Second, 90)},
		Events:  []drill.Result{{Seq: 0, Action: drill.Drain, ActualNS: int64(11 * time.Second), Outcome: drill.OutcomeOK}},
	}
	steady, ex := q.excess(r)
	if steady.Value != 100 || len(ex) != 1 || ex[0][0].Value != 400 || ex[0][1].Value != 4 {
		t.Fatalf("steady %v excess %+v", steady, ex)
	}
	// failures at the p99's rank near the event: the window's p99 is +∞,
	// so is the peak and its ratio — never the successes' figure
	r.Windows[3].TTFTP99, r.Windows[3].TTFTP99OK = math.Inf(1), 400
	steady, ex = q.excess(r)
	if steady.Value != 100 || ex[0][0].State != result.Never || ex[0][1].State != result.Never {
		t.Fatalf("a +∞ window near the event: steady %v excess %+v; want the peak and ratio never", steady, ex)
	}
	// the steady median is nearest rank (⌈n/2⌉): of 5, 6, +∞, +∞ it is 6,
	// measured — not the upper middle +∞
	r.Windows[0].TTFTP99, r.Windows[1].TTFTP99 = 5, 6
	r.Windows[2].TTFTP99, r.Windows[4].TTFTP99 = math.Inf(1), math.Inf(1)
	if steady, _ = q.excess(r); !steady.Measured() || steady.Value != 6 {
		t.Fatalf("steady of 5, 6, +∞, +∞: %v; want 6 measured", steady)
	}
}
