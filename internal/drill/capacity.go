package drill

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Probe is how a drill measures its target's capacity for the load's mix
// before the timeline: a closed loop of clients, each sending the mix's
// next request as soon as its last one ended, whose number doubles every
// Step from Start until the throughput of ok requests gains less than
// Gain over the best level so far (the plateau: the system, not the
// clients, is the limit) or Max clients were reached. Each level's
// throughput is measured over its last two thirds (the first lets the new
// clients' requests reach the engines). The capacity is the throughput of
// the plateau — the best level and the one after it that gained too
// little, pooled — or, when the clients ran out first, of the last level,
// a lower bound. In
// a closed loop each client's requests follow the mix, so the completions
// do too: the throughput is the mix's, bottleneck included.
type Probe struct {
	Step  time.Duration `yaml:"step" json:"step"`   // per level (default 2s)
	Start int           `yaml:"start" json:"start"` // clients of the first level (default 8)
	Max   int           `yaml:"max" json:"max"`     // most clients (default 256)
	Gain  float64       `yaml:"gain" json:"gain"`   // a smaller relative gain is the plateau (default 0.1)
}

// WithDefaults fills zero fields.
func (p Probe) WithDefaults() Probe {
	if p.Step == 0 {
		p.Step = 2 * time.Second
	}
	if p.Start == 0 {
		p.Start = 8
	}
	if p.Max == 0 {
		p.Max = 256
	}
	if p.Gain == 0 {
		p.Gain = 0.1
	}
	return p
}

// Validate reports the first problem, naming the key under prefix.
func (p Probe) Validate(prefix string) error {
	q := p.WithDefaults()
	switch {
	case q.Step < 200*time.Millisecond || q.Step > time.Minute:
		return fmt.Errorf("%s.step %v: must be in [200ms, 1m]", prefix, q.Step)
	case q.Start < 1 || q.Max < q.Start || q.Max > 4096:
		return fmt.Errorf("%s: start (%d) must be ≥ 1 and max (%d) in [start, 4096]", prefix, q.Start, q.Max)
	case !(q.Gain > 0 && q.Gain < 1):
		return fmt.Errorf("%s.gain %v: must be in (0, 1)", prefix, q.Gain)
	}
	return nil
}

// Level is one concurrency level of the probe.
type Level struct {
	Clients    int     `json:"clients"`
	Throughput float64 `json:"throughput"` // ok requests per second over the level's measured part
	OK         int     `json:"ok"`
	Failed     int     `json:"failed"`
	TTFTP50Ms  float64 `json:"ttft_p50_ms"` // NaN when no LLM request ended in it

	fromNS, toNS int64 // the measured part, ns since the run's start
}

// Capacity is what the probe found.
type Capacity struct {
	// Rate is the plateau's throughput (ok req/s of the mix).
	Rate float64
	// Saturated: a level after the best gained less than Gain on it.
	// When false Rate is a lower bound: the clients ran out first.
	Saturated bool
	Levels    []Level
	// Engines is each engine's share of its request type's ok requests
	// on the plateau (every engine saturated), by the engine id the
	// target reported (empty when it reports none): each engine's share
	// of the capacity.
	Engines  map[string]EngineShare
	Duration time.Duration
	Sent     int
}

// EngineShare is one engine's part of the capacity.
type EngineShare struct {
	Type  string  `json:"type"`  // llm | embedding
	Rate  float64 `json:"rate"`  // ok req/s
	Share float64 `json:"share"` // of its type's ok req/s
}

// ErrNoCapacity: no request of the probe succeeded.
var ErrNoCapacity = errors.New("no request of the capacity probe succeeded")

// probeStream separates the probe's request mix from the drill's.
const probeStream = 0x7072_6f62_65 // "probe"

// probe runs the capacity probe of l against env.Target as phase
// "capacity", recording every request, and returns what it found and the
// phase (closed loop).
func (l *Load) probe(ctx context.Context, env *workload.Env) (Capacity, summary.Phase, error) {
	pr := &prober{l: l, env: env, shapes: traffic.Shapes{LLM: l.LLM, Embedding: l.Embedding},
		rng: rand.New(rand.NewPCG(uint64(env.Seed), probeStream)), stop: make(chan struct{})}
	start := time.Now()
	c, best := pr.levels(ctx, l.Probe.WithDefaults())
	close(pr.stop)
	pr.wg.Wait() // the clients' last requests end on their own (the target's timeout bounds them)
	c.Duration, c.Sent = time.Since(start), int(pr.seq.Load())
	ph := summary.Phase{Name: "capacity", Start: start.Sub(env.Start), End: time.Since(env.Start), Scheduled: c.Sent, ClosedLoop: true}
	if best < 0 || c.Levels[best].Throughput <= 0 {
		return c, ph, fmt.Errorf("%w (%d sent); check that the target serves the drill's models", ErrNoCapacity, c.Sent)
	}
	// The plateau: the best level and those after it within Gain of it
	// (none gained on it); pooled, their noise averages out. A level
	// after the best means the clients outran the target: saturated.
	p := l.Probe.WithDefaults()
	c.Saturated = best < len(c.Levels)-1
	plateau := []Level{c.Levels[best]}
	for _, lv := range c.Levels[best+1:] {
		if lv.Throughput >= (1-p.Gain)*c.Levels[best].Throughput {
			plateau = append(plateau, lv)
		}
	}
	ok, span := 0, int64(0)
	for _, lv := range plateau {
		ok, span = ok+lv.OK, span+lv.toNS-lv.fromNS
	}
	c.Rate = float64(ok) / (float64(span) / 1e9)
	pr.mu.Lock()
	c.Engines = shares(pr.recs, plateau)
	pr.mu.Unlock()
	return c, ph, ctx.Err()
}

// prober runs the probe's closed loop.
type prober struct {
	l      *Load
	env    *workload.Env
	shapes traffic.Shapes
	mu     sync.Mutex
	rng    *rand.Rand
	recs   []record.Request
	seq    atomic.Int64
	stop   chan struct{}
	wg     sync.WaitGroup
}

// levels runs the levels and returns what they measured and the index of
// the best (-1: none). A level that gains less than Gain on the best is
// the plateau; one that falls more than Gain below it is taken for noise
// once (the next level decides) and for the plateau the second time.
func (pr *prober) levels(ctx context.Context, p Probe) (Capacity, int) {
	var c Capacity
	best, dips, clients := -1, 0, 0
	for n := p.Start; n <= p.Max && ctx.Err() == nil; n *= 2 {
		for ; clients < n; clients++ {
			pr.wg.Add(1)
			go pr.client(ctx)
		}
		from := time.Now()
		if !sleepUntil(ctx, from.Add(p.Step)) {
			break
		}
		pr.mu.Lock()
		lv := level(pr.recs, pr.env.Offset(from.Add(p.Step/3)), pr.env.Offset(from.Add(p.Step)), n)
		pr.mu.Unlock()
		c.Levels = append(c.Levels, lv)
		switch {
		case best < 0 || lv.Throughput >= (1+p.Gain)*c.Levels[best].Throughput:
			best, dips = len(c.Levels)-1, 0
		case lv.Throughput < (1-p.Gain)*c.Levels[best].Throughput && dips == 0:
			dips++
		default:
			return c, best
		}
	}
	return c, best
}

// client sends the mix's next request as soon as its last one ended,
// until the probe stops.
func (pr *prober) client(ctx context.Context) {
	defer pr.wg.Done()
	wctx := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		select {
		case <-pr.stop:
			return
		default:
		}
		i := int(pr.seq.Add(1) - 1)
		pr.env.Sent()
		pr.mu.Lock()
		it := pr.l.item(pr.rng)
		pr.mu.Unlock()
		rec := record.Request{ID: fmt.Sprintf("capacity-%05d", i), Seq: i, Kind: "request", Phase: "capacity"}
		rec = pr.shapes.Send(wctx, pr.env, rec, it, time.Now(), pr.l.deadline(it.Type))
		rec.SLOMet = pr.l.sloMet(&rec)
		pr.env.Record(rec)
		pr.mu.Lock()
		pr.recs = append(pr.recs, rec)
		pr.mu.Unlock()
	}
}

// shares is each engine's share of its type's ok requests that ended in
// the measured parts of levels, and its rate there.
func shares(recs []record.Request, levels []Level) map[string]EngineShare {
	out, byType := map[string]EngineShare{}, map[string]int{}
	secs := 0.0
	for _, lv := range levels {
		secs += float64(lv.toNS-lv.fromNS) / 1e9
		for i := range recs {
			r := &recs[i]
			if r.OK && r.Engine != "" && r.EndNS >= lv.fromNS && r.EndNS < lv.toNS {
				e := out[r.Engine]
				e.Type, e.Rate = r.Type, e.Rate+1
				out[r.Engine] = e
				byType[r.Type]++
			}
		}
	}
	for id, e := range out {
		e.Share, e.Rate = e.Rate/float64(byType[e.Type]), e.Rate/secs
		out[id] = e
	}
	return out
}

// level summarises the requests that ended in [fromNS, toNS) with n
// clients.
func level(recs []record.Request, fromNS, toNS int64, n int) Level {
	lv := Level{Clients: n, fromNS: fromNS, toNS: toNS}
	var ttft []float64
	for i := range recs {
		r := &recs[i]
		if r.EndNS < fromNS || r.EndNS >= toNS {
			continue
		}
		if !r.OK {
			lv.Failed++
			continue
		}
		lv.OK++
		if r.FirstToken > 0 {
			ttft = append(ttft, r.TTFTMs)
		}
	}
	lv.Throughput = float64(lv.OK) / (float64(toNS-fromNS) / 1e9)
	lv.TTFTP50Ms = series.Percentile(ttft, 50)
	return lv
}

// Sizing is how a drill's rate was set: Utilisation × the measured
// Capacity, or the load's own rate when Capacity is nil.
type Sizing struct {
	Utilisation float64
	Capacity    *Capacity
	Rate        float64 // the offered rate, req/s
	// Bottleneck is the request type whose engines bound the mix: llm
	// when the load has chat completions (their engines are orders of
	// magnitude slower than an embedder), else embedding.
	Bottleneck string
}

// UtilisationWith is the offered rate ÷ the capacity left when the engines
// in lost have lost the given fraction of their capacity (1: all of it;
// an empty map: the whole pool). False when the capacity, or the share
// of an engine of the bottleneck type, is not known; +Inf when nothing
// is left. Engines of another type do not bound the mix and are ignored.
func (s Sizing) UtilisationWith(lost map[string]float64) (float64, bool) {
	if s.Capacity == nil || s.Capacity.Rate <= 0 {
		return math.NaN(), false
	}
	left := 1.0
	for id, f := range lost {
		e, ok := s.Capacity.Engines[id]
		switch {
		case !ok && id != Gateway:
			return math.NaN(), false
		case id == Gateway:
			left -= f
		case e.Type == s.Bottleneck:
			left -= f * e.Share
		}
	}
	if left <= 1e-9 {
		return math.Inf(1), true
	}
	return s.Rate / (s.Capacity.Rate * left), true
}
