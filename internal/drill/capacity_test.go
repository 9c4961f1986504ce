package drill_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/drill/slots"
	"github.com/sagebench/sagebench/internal/target"
)

// TestProbeOnKnownCapacity: the quick probe against a k-slot server
// (3 slots, 50 ms TTFT and 8 tokens 10 ms apart per chat, instant
// embeddings, the drill's 80/20 mix) reads the mix's capacity — the
// server's chat capacity during the probe's hold (3 ÷ the mean slot time
// it measured, so that a loaded machine's late timers move the truth with
// the service) ÷ 0.8 — within 10 % in 10 of 10 seeds.
func TestProbeOnKnownCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("10 probes of ~5 s")
	}
	for seed := int64(1); seed <= 10; seed++ {
		srv := slots.NewSlotServer(3, 50*time.Millisecond, 8, 10*time.Millisecond)
		tg, err := target.Open(t.Context(), target.Config{URL: srv.URL}, target.Options{})
		if err != nil {
			t.Fatal(err)
		}
		env, _ := newEnv(tg)
		env.Seed = seed
		l := drill.QuickSizedLoad(10 * time.Second)
		c, err := l.MeasureCapacity(t.Context(), env)
		tg.Close(context.Background())
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		from := env.Start.Add(c.HoldFrom)
		truth := srv.ChatCapacity(from, from.Add(c.Hold)) / l.LLMRatio
		dev := c.Rate/truth - 1
		t.Logf("seed %d: probe %.2f req/s (saturated %v, %d levels), truth %.2f: %+.1f %%", seed, c.Rate, c.Saturated, len(c.Levels), truth, 100*dev)
		if !c.Saturated || math.Abs(dev) > 0.10 {
			t.Errorf("seed %d: probe %.2f req/s (saturated %v) against a true %.2f (%+.1f %%)", seed, c.Rate, c.Saturated, truth, 100*dev)
		}
	}
}

// TestPlateauAtTheLastLevel: a target that saturates by the probe's
// last level (3 slots; clients 2, 4, 8 with Max 8) is on its plateau
// although no level came after the last to judge it — the probe used to
// report "no plateau … still grew at 8 clients" there and Q5 refused to
// run (CI, loaded: 51.0 req/s at 64 clients, 28.6 at 128 = Max).
func TestPlateauAtTheLastLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("a probe of ~3 s")
	}
	srv := slots.NewSlotServer(3, 50*time.Millisecond, 8, 10*time.Millisecond)
	defer srv.Close()
	tg, err := target.Open(t.Context(), target.Config{URL: srv.URL}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	env, _ := newEnv(tg)
	l := drill.QuickSizedLoad(10 * time.Second)
	l.Probe.Start, l.Probe.Max, l.Probe.Step, l.Probe.Hold = 2, 8, 500*time.Millisecond, time.Second
	c, err := l.MeasureCapacity(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	var tp []string
	for _, lv := range c.Levels {
		tp = append(tp, fmt.Sprintf("%d: %.1f", lv.Clients, lv.Throughput))
	}
	if !c.Saturated || c.HoldClients != 8 {
		t.Errorf("levels %v: saturated %v, held at %d clients; want the plateau held at 8", tp, c.Saturated, c.HoldClients)
	}
}
