package drill

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Load is the steady mixed traffic a drill runs under.
type Load struct {
	Schedule load.ScheduleConfig `yaml:"schedule" json:"schedule"`
	// LLMRatio is the fraction of chat completions; the rest are embeddings.
	LLMRatio    float64            `yaml:"llm_ratio" json:"llm_ratio"`
	Tenants     []traffic.Weighted `yaml:"tenants" json:"tenants"`
	Priorities  []traffic.Weighted `yaml:"priorities" json:"priorities"`
	LLM         traffic.LLMShape   `yaml:"llm" json:"llm"`
	Embedding   traffic.EmbedShape `yaml:"embedding" json:"embedding"`
	SLO         SLO                `yaml:"slo" json:"slo"`
	MaxInFlight int                `yaml:"max_in_flight" json:"max_in_flight"` // 0: unlimited
	// Utilisation, when > 0, sets the rate: this fraction of the
	// capacity the Probe measures before the timeline (schedule.rate must
	// then be 0). 0: schedule.rate as given, no probe.
	Utilisation float64 `yaml:"utilisation" json:"utilisation"`
	Probe       Probe   `yaml:"probe" json:"probe"`
	// Capacity, when > 0 with a utilisation, is the target's capacity for
	// the mix in req/s, as the user measured it: no probe is run.
	Capacity float64 `yaml:"capacity,omitempty" json:"capacity,omitempty"`
}

// SLO are the per-type objectives; TTFT and E2E count from the intended send.
type SLO struct {
	LLMTTFT      time.Duration `yaml:"llm_ttft" json:"llm_ttft"`
	LLME2E       time.Duration `yaml:"llm_e2e" json:"llm_e2e"`
	EmbeddingE2E time.Duration `yaml:"embedding_e2e" json:"embedding_e2e"`
}

// DefaultUtilisation is the share of the measured capacity a drill
// offers unless told otherwise.
const DefaultUtilisation = 0.7

// SizedLoad is DefaultLoad offering DefaultUtilisation of the capacity
// the probe measures, for d.
func SizedLoad(d time.Duration) Load {
	l := DefaultLoad(0, d)
	l.Utilisation = DefaultUtilisation
	return l
}

// QuickSizedLoad is SizedLoad with the quick scale's shorter prompts and
// outputs, and a shorter probe (levels of 1.5 s, at most 128 clients, a
// hold of 4 s).
func QuickSizedLoad(d time.Duration) Load {
	l := QuickLoad(0, d)
	l.Utilisation, l.Probe.Step, l.Probe.Max, l.Probe.Hold = DefaultUtilisation, 1500*time.Millisecond, 128, 4*time.Second
	return l
}

// DefaultLoad is a Poisson mix of 80 % streamed chat completions and 20 %
// embeddings at rate req/s for d, two tenants, priorities with 20 %
// urgent (critical or high).
func DefaultLoad(rate float64, d time.Duration) Load {
	return Load{
		Probe:    Probe{}.WithDefaults(),
		Schedule: load.ScheduleConfig{Process: load.ProcessPoisson, Rate: rate, Duration: d},
		LLMRatio: 0.8,
		Tenants:  []traffic.Weighted{{Name: "tenant-a", Weight: 0.6}, {Name: "tenant-b", Weight: 0.4}},
		Priorities: []traffic.Weighted{{Name: "critical", Weight: 0.05}, {Name: "high", Weight: 0.15},
			{Name: "normal", Weight: 0.7}, {Name: "low", Weight: 0.1}},
		LLM:       traffic.LLMShape{Model: "meta-llama/Llama-3.1-8B-Instruct", Shape: shape.Of(128, 64), Stream: true},
		Embedding: traffic.EmbedShape{Model: "BAAI/bge-small-en-v1.5", Inputs: 2, Words: 32},
		SLO:       SLO{LLMTTFT: time.Second, LLME2E: 10 * time.Second, EmbeddingE2E: time.Second},
	}
}

// QuickLoad is DefaultLoad with the shorter prompts and outputs of a
// drill's --quick scale.
func QuickLoad(rate float64, d time.Duration) Load {
	l := DefaultLoad(rate, d)
	l.LLM.Shape = shape.Of(64, 32)
	return l
}

// Override applies --rate, --total-requests, --duration and --llm-ratio
// to the load (every drill takes them the same way): --rate fixes the
// rate, so the load is no longer sized from the measured capacity.
func (l *Load) Override(o workload.Overrides) {
	o.ApplySchedule(&l.Schedule)
	if o.Rate != nil {
		l.Utilisation = 0
	}
	if o.LLMRatio != nil {
		l.LLMRatio = *o.LLMRatio
	}
}

// Validate reports the first problem, naming the key under prefix.
func (l *Load) Validate(prefix string) error {
	sc := l.Schedule
	switch {
	case math.IsNaN(l.Utilisation) || l.Utilisation < 0 || l.Utilisation > 2:
		return fmt.Errorf("%s.utilisation %v: must be in [0, 2] (0: use schedule.rate)", prefix, l.Utilisation)
	case l.Utilisation > 0 && sc.Rate != 0:
		return fmt.Errorf("%s: set one of schedule.rate (a fixed rate) and utilisation (a share of the measured capacity), not both", prefix)
	case l.Utilisation > 0 && (sc.Duration <= 0 || sc.Count > 0):
		return fmt.Errorf("%s.schedule: a load sized from the measured capacity runs for schedule.duration (set it, and count: 0); --rate fixes the rate instead", prefix)
	case math.IsNaN(l.Capacity) || l.Capacity < 0 || (l.Capacity > 0 && l.Utilisation == 0):
		return fmt.Errorf("%s.capacity %v: must be > 0 req/s, and only with utilisation (0: measure it)", prefix, l.Capacity)
	case l.Utilisation > 0:
		sc.Rate = 1 // measured before the run
		if err := l.Probe.Validate(prefix + ".probe"); err != nil {
			return err
		}
	}
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("%s.%w", prefix, err)
	}
	if math.IsNaN(l.LLMRatio) || l.LLMRatio < 0 || l.LLMRatio > 1 {
		return fmt.Errorf("%s.llm_ratio %v: must be in [0,1]", prefix, l.LLMRatio)
	}
	if err := traffic.ValidateWeights(prefix+".tenants", l.Tenants, nil); err != nil {
		return err
	}
	if err := traffic.ValidateWeights(prefix+".priorities", l.Priorities, protocol.Priorities()); err != nil {
		return err
	}
	switch {
	case l.LLMRatio > 0 && l.LLM.Validate(prefix+".llm") != nil:
		return l.LLM.Validate(prefix + ".llm")
	case l.LLMRatio < 1 && l.Embedding.Validate(prefix+".embedding") != nil:
		return l.Embedding.Validate(prefix + ".embedding")
	case !traffic.SLOBoundOK(l.SLO.LLMTTFT) || !traffic.SLOBoundOK(l.SLO.LLME2E) || !traffic.SLOBoundOK(l.SLO.EmbeddingE2E):
		return fmt.Errorf("%s.slo: bounds must be between 0 (no bound) and %v", prefix, protocol.MaxDeadline)
	case l.MaxInFlight < 0:
		return errors.New(prefix + ".max_in_flight must be ≥ 0 (0 = unlimited)")
	}
	return nil
}

// Span is how long the schedule runs (its duration, or count ÷ rate).
func (l *Load) Span() time.Duration {
	if l.Schedule.Duration > 0 {
		return l.Schedule.Duration
	}
	if l.Schedule.Rate > 0 {
		return time.Duration(float64(l.Schedule.Count) / l.Schedule.Rate * float64(time.Second))
	}
	return 0
}

// mixStream separates the request-mix random stream from the schedule's.
const mixStream = 0x6472_696c_6c // "drill"

// Items draws n request shapes from seed.
func (l *Load) Items(seed int64, n int) []traffic.Item {
	rng := rand.New(rand.NewPCG(uint64(seed), mixStream))
	items := make([]traffic.Item, n)
	for i := range items {
		items[i] = l.item(rng)
	}
	l.LLM.Fill(items)
	return items
}

// item draws one request shape.
func (l *Load) item(rng *rand.Rand) traffic.Item {
	typ := protocol.TypeEmbedding
	if rng.Float64() < l.LLMRatio {
		typ = protocol.TypeLLM
	}
	return traffic.Item{Type: typ, Tenant: traffic.Pick(rng, l.Tenants), Priority: traffic.Pick(rng, l.Priorities), Text: rng.Uint64()}
}

// bottleneck is the request type whose engines bound the mix.
// bottleneckShare is the bottleneck type's share of the mix.
func (l *Load) bottleneckShare() float64 {
	if l.LLMRatio > 0 {
		return l.LLMRatio
	}
	return 1
}

func (l *Load) bottleneck() string {
	if l.LLMRatio > 0 {
		return protocol.TypeLLM
	}
	return protocol.TypeEmbedding
}

// sloMet reports whether a finished request met its type's SLO.
func (l *Load) sloMet(r *record.Request) bool {
	if !r.OK {
		return false
	}
	if r.Type == protocol.TypeEmbedding {
		return traffic.Within(r.E2EMs, l.SLO.EmbeddingE2E)
	}
	ttft := r.TTFTMs
	if r.FirstToken == 0 {
		ttft = r.E2EMs
	}
	return traffic.Within(ttft, l.SLO.LLMTTFT) && traffic.Within(r.E2EMs, l.SLO.LLME2E)
}

// deadline is the SLO deadline header of a request of type typ.
func (l *Load) deadline(typ string) time.Duration {
	if typ == protocol.TypeLLM {
		return l.SLO.LLME2E
	}
	return l.SLO.EmbeddingE2E
}

// Tokens is the distribution of the chat lengths drawn for sched, by
// priority, for plans.
func (l *Load) Tokens(seed int64, sched load.Schedule) []workload.TokenDist {
	items := l.Items(seed, sched.Len())
	traffic.FillTrace(items, sched, l.LLM.BlockTokens)
	return traffic.TokenPlan(items, l.LLM.PrefixTokens(), func(it traffic.Item) string { return it.Priority })
}

// Mix describes the request types of n requests drawn from seed, for plans.
func (l *Load) Mix(seed int64, n int) string {
	llm := 0
	for _, it := range l.Items(seed, n) {
		if it.Type == protocol.TypeLLM {
			llm++
		}
	}
	return fmt.Sprintf("llm %d, embedding %d", llm, n-llm)
}
