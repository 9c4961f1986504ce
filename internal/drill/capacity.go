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
// Step from Start until a level gains less than Gain over the best level
// so far (the plateau: the system, not the clients, is the limit; a level
// is judged when the next has run, so the probe runs one level past the
// plateau) or Max clients were reached. The clients are then doubled once
// more (at most Max) and run on for Hold, after a third of a step to
// settle, and the capacity is read off that hold alone: the
// work the bottleneck type (chat completions when the mix has any)
// completed per second — the share of each request's tokens, or of its
// time in service, inside the hold — ÷ that type's share of the mix. The
// levels only find the plateau; reading the capacity off the best of
// short, noisy levels (the earlier method) took the luckiest one, and
// counting the embeddings that closed-loop clients race through between
// chats added their burstiness to it (see docs/q5.md). Its interval is
// from batch means over the hold's eighths. When the clients ran out
// first, no plateau was seen: the capacity is a lower bound (the best
// level) and a drill is not run on it.
type Probe struct {
	Step  time.Duration `yaml:"step" json:"step"`   // per level (default 2s)
	Start int           `yaml:"start" json:"start"` // clients of the first level (default 8)
	Max   int           `yaml:"max" json:"max"`     // most clients (default 256)
	Gain  float64       `yaml:"gain" json:"gain"`   // a smaller relative gain is the plateau (default 0.1)
	Hold  time.Duration `yaml:"hold" json:"hold"`   // the measurement at the plateau (default 3 steps)
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
	if p.Hold == 0 {
		p.Hold = 3 * p.Step
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
	case q.Hold < 500*time.Millisecond || q.Hold > 10*time.Minute:
		return fmt.Errorf("%s.hold %v: must be in [500ms, 10m]", prefix, q.Hold)
	}
	return nil
}

// Level is one concurrency level of the probe.
type Level struct {
	Clients int `json:"clients"`
	// Throughput is ok requests per second over the level's measured
	// part: while the probe runs, by completion (which decides when it
	// stops); once every request has ended, as work done (see fluid).
	Throughput float64 `json:"throughput"`
	OK         int     `json:"ok"`
	Failed     int     `json:"failed"`
	TTFTP50Ms  float64 `json:"ttft_p50_ms"` // NaN when no LLM request ended in it

	fromNS, toNS int64 // the measured part, ns since the run's start
}

// Capacity is what the probe found.
type Capacity struct {
	// Rate is the throughput of the mix at the plateau (req/s), read off
	// the hold; Low and High its 95 % interval (batch means).
	Rate, Low, High float64
	// Saturated: a level gained less than Gain on the best before it.
	// When false Rate is a lower bound (the best level): the clients ran
	// out first.
	Saturated bool
	// Hold is the measurement at the plateau; HoldClients its clients;
	// HoldOK the bottleneck type's ok requests that worked in it.
	Hold        time.Duration
	HoldFrom    time.Duration // the hold's start, since the run's start
	HoldClients int
	HoldOK      int
	// UserSet: the capacity was given (load.capacity), not probed.
	UserSet bool
	Levels  []Level
	// Engines is each engine's share of its request type's ok requests
	// on the plateau (every engine saturated), by the engine id the
	// target reported (empty when it reports none): each engine's share
	// of the capacity.
	Engines  map[string]EngineShare
	Duration time.Duration
	Sent     int
	probe    *ProbeRecord // what the probe observed (drill.json); nil: not probed
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
	// The last requests end on their own (the target's timeout bounds
	// them) — unless the run is interrupted: then they get env.Drain.
	hits, cancelHits := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHits()
	stopDrain := context.AfterFunc(ctx, func() { time.AfterFunc(env.Drain, cancelHits) })
	defer stopDrain()
	pr.hits = hits
	start := time.Now()
	p := l.Probe.WithDefaults()
	levels, plateau := pr.levels(ctx, p)
	var hold Level
	if plateau && len(levels) > 0 {
		hold = pr.hold(ctx, p, min(2*levels[len(levels)-1].Clients, max(p.Max, levels[len(levels)-1].Clients)))
	}
	close(pr.stop)
	pr.wg.Wait()
	pb := ProbeRecord{Plateau: plateau, DurationNS: int64(time.Since(start)), Sent: int(pr.seq.Load()), Hold: hold.window()}
	for _, lv := range levels {
		pb.Levels = append(pb.Levels, lv.window())
	}
	ph := summary.Phase{Name: "capacity", Start: start.Sub(env.Start), End: time.Since(env.Start), Scheduled: pb.Sent, ClosedLoop: true}
	c := l.capacityOf(pr.recs, pb)
	c.probe = &pb
	if !(c.Rate > 0) {
		return c, ph, fmt.Errorf("%w (%d sent); check that the target serves the drill's models", ErrNoCapacity, c.Sent)
	}
	return c, ph, ctx.Err()
}

// hold raises the clients to n — twice the last level's, at most Max: a
// plateau judged on a noisy low level is then still measured saturated,
// and more clients never lower a work-conserving target's throughput —
// lets them settle for a third of a step, and measures the next p.Hold.
func (pr *prober) hold(ctx context.Context, p Probe, n int) Level {
	for range n - pr.clients {
		pr.wg.Add(1)
		go pr.client(ctx, p.Step/3)
	}
	pr.clients = max(pr.clients, n)
	from := time.Now().Add(p.Step / 3)
	if !sleepUntil(ctx, from.Add(p.Hold)) {
		return Level{}
	}
	return Level{Clients: n, fromNS: pr.env.Offset(from), toNS: pr.env.Offset(from.Add(p.Hold))}
}

// mixRate is the mix's throughput over lv read off its bottleneck: the
// work of the ok requests of type typ done in lv per second ÷ share, that
// type's share of the mix. In a closed loop the other types complete in
// proportion only on average — clients that drew an embedding race
// through it while the chats queue — so counting them adds noise and no
// information.
func mixRate(recs []record.Request, lv Level, typ string, share float64) float64 {
	secs := float64(lv.toNS-lv.fromNS) / 1e9
	if secs <= 0 || share <= 0 {
		return 0
	}
	w := 0.0
	for i := range recs {
		if r := &recs[i]; r.OK && r.Type == typ {
			w += workIn(r, lv.fromNS, lv.toNS)
		}
	}
	return w / secs / share
}

// batchMeans is the 95 % interval of the mix's rate over lv from its k
// equal batches: their mean ± t(k−1) × their standard error.
func batchMeans(recs []record.Request, lv Level, typ string, share float64, k int) (lo, hi float64) {
	step := (lv.toNS - lv.fromNS) / int64(k)
	xs := make([]float64, k)
	mean := 0.0
	for i := range xs {
		b := Level{fromNS: lv.fromNS + int64(i)*step, toNS: lv.fromNS + int64(i+1)*step}
		xs[i] = mixRate(recs, b, typ, share)
		mean += xs[i] / float64(k)
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss / float64(k-1) / float64(k))
	t := 2.365 // Student's t, 7 degrees of freedom, 97.5 %
	return max(mean-t*se, 0), mean + t*se
}

// okIn counts the ok requests of type typ that worked in lv.
func okIn(recs []record.Request, lv Level, typ string) int {
	n := 0
	for i := range recs {
		if r := &recs[i]; r.OK && r.Type == typ && workIn(r, lv.fromNS, lv.toNS) > 0 {
			n++
		}
	}
	return n
}

// bestLevel is the last level that gained at least gain on the best
// before it (-1: none).
func bestLevel(levels []Level, gain float64) int {
	best := -1
	for i, lv := range levels {
		if best < 0 || lv.Throughput >= (1+gain)*levels[best].Throughput {
			best = i
		}
	}
	return best
}

// prober runs the probe's closed loop.
type prober struct {
	l       *Load
	env     *workload.Env
	shapes  traffic.Shapes
	mu      sync.Mutex
	rng     *rand.Rand
	hits    context.Context // the requests' context: cancelled a drain after the run's
	recs    []record.Request
	seq     atomic.Int64
	clients int // started so far
	stop    chan struct{}
	wg      sync.WaitGroup
}

// levels runs the levels and returns them. A level is judged once the
// next has run (by then the requests at work in it have ended, and its
// work done can be read): one that gains less than Gain on the best is
// the plateau, and the probe stops; one that falls more than Gain below
// it is taken for noise once. On a noisy host a saturated target's
// levels can jitter by more than Gain, so two levels in a row that each
// gained less than 2.5 × Gain on the one before — twice the clients for
// under a quarter more throughput, which only a saturated target gives —
// are the plateau too.
func (pr *prober) levels(ctx context.Context, p Probe) ([]Level, bool) {
	var levels []Level
	typ, share := pr.l.bottleneck(), pr.l.bottleneckShare()
	best, dips, clients, slow := -1, 0, 0, 0
	for n := p.Start; n <= p.Max && ctx.Err() == nil; n *= 2 {
		for ; clients < n; clients++ {
			pr.wg.Add(1)
			go pr.client(ctx, p.Step/3)
		}
		pr.clients = clients
		from := time.Now()
		if !sleepUntil(ctx, from.Add(p.Step)) {
			return levels, false
		}
		pr.mu.Lock()
		levels = append(levels, level(pr.recs, pr.env.Offset(from.Add(p.Step/3)), pr.env.Offset(from.Add(p.Step)), n))
		if k := len(levels) - 2; k >= 0 {
			levels[k].Throughput = mixRate(pr.recs, levels[k], typ, share)
		}
		pr.mu.Unlock()
		k := len(levels) - 2
		if k >= 1 && levels[k].Throughput < (1+2.5*p.Gain)*levels[k-1].Throughput {
			slow++
		} else {
			slow = 0
		}
		switch {
		case k < 0:
		case slow >= 2:
			return levels, true
		case best < 0 || levels[k].Throughput >= (1+p.Gain)*levels[best].Throughput:
			best, dips = k, 0
		case levels[k].Throughput < (1-p.Gain)*levels[best].Throughput && dips == 0:
			dips++
		default:
			return levels, true
		}
	}
	return levels, pr.judgeLast(ctx, p, levels, best)
}

// judgeLast judges the level at Max clients, which no next level did:
// after one more step at the same clients its work has been done, and a
// level that gained less than Gain on the best (or fell below it) is the
// plateau — the clients ran out after the throughput stopped growing.
func (pr *prober) judgeLast(ctx context.Context, p Probe, levels []Level, best int) bool {
	k := len(levels) - 1
	if k < 1 || best < 0 || best == k || !sleepUntil(ctx, time.Now().Add(p.Step)) {
		return false
	}
	pr.mu.Lock()
	levels[k].Throughput = mixRate(pr.recs, levels[k], pr.l.bottleneck(), pr.l.bottleneckShare())
	pr.mu.Unlock()
	return levels[k].Throughput < (1+p.Gain)*levels[best].Throughput
}

// client sends the mix's next request as soon as its last one ended,
// until the probe stops; its first waits up to stagger, so that a
// level's new clients do not move in lockstep.
func (pr *prober) client(ctx context.Context, stagger time.Duration) {
	defer pr.wg.Done()
	wctx := pr.hits
	pr.mu.Lock()
	wait := time.Duration(pr.rng.Int64N(int64(stagger) + 1))
	pr.mu.Unlock()
	if !sleepUntil(ctx, time.Now().Add(wait)) {
		return
	}
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

// fluid is the throughput of the ok requests over the measured parts of
// levels, counting the share of each request's work done inside them — a
// streamed answer's tokens, or for another request the part of its time
// in service — rather than its completion: an engine that runs its batch
// in lockstep ends a dozen requests at once, which a count over a second
// sees or misses whole. It also returns each engine's part of it.
func fluid(recs []record.Request, levels []Level) (float64, map[string]EngineShare) {
	engines, byType := map[string]EngineShare{}, map[string]float64{}
	total, secs := 0.0, 0.0
	for _, lv := range levels {
		secs += float64(lv.toNS-lv.fromNS) / 1e9
		for i := range recs {
			r := &recs[i]
			w := workIn(r, lv.fromNS, lv.toNS)
			if !r.OK || w == 0 {
				continue
			}
			total += w
			if r.Engine != "" {
				e := engines[r.Engine]
				e.Type, e.Rate = r.Type, e.Rate+w
				engines[r.Engine] = e
				byType[r.Type] += w
			}
		}
	}
	for id, e := range engines {
		e.Share, e.Rate = e.Rate/byType[e.Type], e.Rate/secs
		engines[id] = e
	}
	return total / secs, engines
}

// workIn is the share of r's work done in [from, to).
func workIn(r *record.Request, from, to int64) float64 {
	if n := len(r.TokenNS); n > 0 {
		in := 0
		for _, t := range r.TokenNS {
			if t >= from && t < to {
				in++
			}
		}
		return float64(in) / float64(n+r.TokenNSDropped)
	}
	start, end := r.SentNS, r.EndNS
	if end <= start {
		return 0
	}
	overlap := min(end, to) - max(start, from)
	return max(float64(overlap), 0) / float64(end-start)
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

// MeasureCapacity runs the capacity probe of l alone against env.Target (as
// Drive does before the load when l.Utilisation is set).
func (l Load) MeasureCapacity(ctx context.Context, env *workload.Env) (Capacity, error) {
	c, _, err := l.probe(ctx, env)
	return c, err
}

// NoPlateauError: the probe's clients ran out (or the run was stopped)
// before the target's throughput stopped growing; the capacity is only a
// lower bound, and the drill is not run at a load made up from it.
type NoPlateauError struct{ Capacity Capacity }

func (e *NoPlateauError) Error() string {
	c, last := e.Capacity, 0
	if n := len(c.Levels); n > 0 {
		last = c.Levels[n-1].Clients
	}
	return fmt.Sprintf("the capacity probe reached no plateau: the throughput still grew at %d clients (capacity bound ≥ %.2f req/s); the drill was not run at a load made up from it: raise load.probe.max, rerun on a quieter machine, or set load.capacity (req/s)",
		last, c.Rate)
}
