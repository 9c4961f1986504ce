package load

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/dataset"
)

// Arrival processes understood by NewSchedule.
const (
	ProcessPoisson  = "poisson"
	ProcessConstant = "constant"
	ProcessGamma    = "gamma"
	ProcessOnOff    = "onoff"
	ProcessRamp     = "ramp"
	ProcessTrace    = "trace"
)

// Spacing of arrivals inside a time-varying rate (onoff, ramp).
const (
	SpacingPoisson = "poisson" // non-homogeneous Poisson (default)
	SpacingUniform = "uniform" // deterministic: the i-th arrival where the integrated rate reaches i
)

// MaxArrivals bounds the size of one schedule (memory: 8 bytes per arrival
// here, more in the records).
const MaxArrivals = 20_000_000

// MaxBurstiness bounds schedule.burstiness: beyond it most gamma gaps
// underflow to zero and a duration-bounded schedule never advances.
const MaxBurstiness = 1000

// maxOffset bounds an arrival offset (a Duration overflows at 292 years).
const maxOffset = 30 * 24 * time.Hour

// Bounds of schedule.speedup: a trace of a year (dataset.MaxTraceSpan)
// slowed down 1000 times still fits a Duration (it is then refused for
// passing maxOffset, by checked arithmetic, not wrapped).
const (
	MinSpeedup = 1e-3
	MaxSpeedup = 1e3
)

// ScheduleConfig describes an arrival schedule. Rates are in requests per
// second. A schedule ends after Count arrivals or at Duration, whichever
// comes first; at least one of the two must be set (ramp needs Duration).
type ScheduleConfig struct {
	Process    string        `yaml:"process" json:"process"`       // poisson | constant | gamma | onoff | ramp | trace
	Rate       float64       `yaml:"rate" json:"rate"`             // req/s; base rate for onoff, start rate for ramp
	Count      int           `yaml:"count" json:"count"`           // total arrivals (0 → from Duration)
	Duration   time.Duration `yaml:"duration" json:"duration"`     // length / cap (0 → from Count)
	Burstiness float64       `yaml:"burstiness" json:"burstiness"` // gamma: squared coefficient of variation of gaps (1 = Poisson, >1 burstier, <1 smoother)

	BurstRate   float64       `yaml:"burst_rate" json:"burst_rate"`     // onoff: rate during a burst
	BurstLength time.Duration `yaml:"burst_length" json:"burst_length"` // onoff: burst length, at the start of each period
	BurstPeriod time.Duration `yaml:"burst_period" json:"burst_period"` // onoff: period of the on/off cycle

	RampTo float64 `yaml:"ramp_to" json:"ramp_to"` // ramp: rate reached at Duration

	Spacing string `yaml:"spacing" json:"spacing"` // onoff, ramp: poisson (default) | uniform

	TraceFile string `yaml:"trace_file" json:"trace_file"` // trace: JSONL, one {"offset_ms": x} or {"offset_s": x} per line
	// TraceFormat is the trace file's format: offsets (the JSONL above,
	// the default) or a trace with request lengths — mooncake, azure,
	// burstgpt (package dataset) — whose lengths ride along in
	// Schedule.Entries for the workload's requests.
	TraceFormat string `yaml:"trace_format,omitempty" json:"trace_format,omitempty"`
	// TraceStart and Speedup window a trace: arrivals from TraceStart
	// (in the trace's own time) on, their gaps divided by Speedup (0: 1).
	TraceStart time.Duration `yaml:"trace_start,omitempty" json:"trace_start,omitempty"`
	Speedup    float64       `yaml:"speedup,omitempty" json:"speedup,omitempty"`
}

// Validate reports the first problem of c as an error naming the field
// (schedule.<yaml key>) and the fix.
func (c ScheduleConfig) Validate() error {
	if c.Count < 0 {
		return errors.New("schedule.count must be >= 0 (0 means: derive from duration)")
	}
	if c.Duration < 0 {
		return errors.New("schedule.duration must be >= 0 (0 means: derive from count)")
	}
	if c.Duration > MaxDuration {
		return fmt.Errorf("schedule.duration %v exceeds the limit of %v; lower it", c.Duration, MaxDuration)
	}
	if c.Count == 0 && c.Duration == 0 {
		return errors.New("schedule: set schedule.count or schedule.duration (or both; the first reached ends the schedule)")
	}
	for name, v := range map[string]float64{"rate": c.Rate, "burst_rate": c.BurstRate, "ramp_to": c.RampTo, "burstiness": c.Burstiness} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("schedule.%s must be a finite number >= 0, got %v", name, v)
		}
	}
	if sp := c.Speedup; sp != 0 && !(sp >= MinSpeedup && sp <= MaxSpeedup) { // NaN fails too
		return fmt.Errorf("schedule.speedup %v: want from %g to %g (0: 1, as recorded)", sp, MinSpeedup, MaxSpeedup)
	}
	if c.Spacing != "" && c.Spacing != SpacingPoisson && c.Spacing != SpacingUniform {
		return fmt.Errorf("schedule.spacing %q is unknown; use poisson or uniform", c.Spacing)
	}
	if err := c.validateProcess(); err != nil {
		return err
	}
	return c.validateSize()
}

func (c ScheduleConfig) validateProcess() error {
	p := c.Process
	switch p {
	case ProcessPoisson, ProcessConstant:
		if c.Rate <= 0 {
			return fmt.Errorf("schedule.rate must be > 0 for process %s", p)
		}
	case ProcessGamma:
		if c.Rate <= 0 {
			return fmt.Errorf("schedule.rate must be > 0 for process %s", p)
		}
		if c.Burstiness <= 0 || c.Burstiness > MaxBurstiness {
			return fmt.Errorf("schedule.burstiness must be > 0 and <= %d for process gamma (1 = Poisson, e.g. 4 for bursty traffic)", MaxBurstiness)
		}
	case ProcessOnOff:
		return c.validateOnOff()
	case ProcessRamp:
		if c.Duration <= 0 {
			return errors.New("schedule.duration must be > 0 for process ramp (the ramp goes from rate to ramp_to over duration)")
		}
		if c.Rate == 0 && c.RampTo == 0 {
			return errors.New("schedule.rate or schedule.ramp_to must be > 0 for process ramp")
		}
	case ProcessTrace:
		if c.TraceFile == "" {
			return errors.New("schedule.trace_file must name a JSONL file of offsets for process trace")
		}
		if c.Rate != 0 {
			return errors.New("schedule.rate is not used by process trace (the trace gives the times); remove it")
		}
		if f := c.TraceFormat; f != "" && f != TraceOffsets && !slices.Contains(dataset.TraceFormats(), f) {
			return fmt.Errorf("schedule.trace_format %q: use %s or one of %s", f, TraceOffsets, strings.Join(dataset.TraceFormats(), ", "))
		}
		if c.TraceStart < 0 || c.TraceStart > dataset.MaxTraceSpan {
			return fmt.Errorf("schedule.trace_start %v: want from 0 to %v (a trace spans at most that)", c.TraceStart, dataset.MaxTraceSpan)
		}
	case "":
		return errors.New("schedule.process is missing; use one of poisson, constant, gamma, onoff, ramp, trace")
	default:
		return fmt.Errorf("schedule.process %q is unknown; use one of poisson, constant, gamma, onoff, ramp, trace", p)
	}
	return nil
}

func (c ScheduleConfig) validateOnOff() error {
	if c.BurstPeriod <= 0 {
		return errors.New("schedule.burst_period must be > 0 for process onoff (e.g. 10s)")
	}
	if c.BurstLength <= 0 || c.BurstLength > c.BurstPeriod {
		return errors.New("schedule.burst_length must be > 0 and <= schedule.burst_period for process onoff")
	}
	if c.BurstRate <= 0 {
		return errors.New("schedule.burst_rate must be > 0 for process onoff")
	}
	return nil
}

// validateSize rejects schedules that would not fit in memory.
func (c ScheduleConfig) validateSize() error {
	if c.Count > MaxArrivals {
		return fmt.Errorf("schedule.count %d exceeds the limit of %d arrivals; lower it", c.Count, MaxArrivals)
	}
	if c.Count > 0 || c.Process == ProcessTrace {
		return nil
	}
	peak := math.Max(c.Rate, math.Max(c.BurstRate, c.RampTo))
	if n := peak * c.Duration.Seconds(); n > MaxArrivals {
		return fmt.Errorf("schedule: rate × duration ≈ %.0f arrivals exceeds the limit of %d; lower schedule.rate or schedule.duration, or set schedule.count", n, MaxArrivals)
	}
	return nil
}

// Schedule is a sorted list of intended send offsets from the start of a
// run. Length is the window the schedule covers (the configured duration,
// or the nominal time Count arrivals take); it may exceed the last offset.
type Schedule struct {
	Offsets []time.Duration
	Length  time.Duration
	// Entries, for a trace with request lengths, are the trace's request
	// of each arrival (len(Offsets)); nil otherwise.
	Entries []dataset.Entry
}

// Len is the number of arrivals.
func (s Schedule) Len() int { return len(s.Offsets) }

// Span is the window the schedule covers: Length, or the last offset if later.
func (s Schedule) Span() time.Duration {
	span := s.Length
	if n := len(s.Offsets); n > 0 && s.Offsets[n-1] > span {
		span = s.Offsets[n-1]
	}
	return span
}

// Rate is the mean target rate in arrivals per second over Span (0 for an
// empty or instantaneous schedule).
func (s Schedule) Rate() float64 {
	if span := s.Span(); span > 0 {
		return float64(len(s.Offsets)) / span.Seconds()
	}
	return 0
}

// NewSchedule computes the whole schedule of cfg. It is deterministic: the
// same cfg and seed give identical offsets on every build and platform
// with the same floating-point behaviour (the random stream is PCG from
// math/rand/v2 and all variates are derived from it by code in this
// package).
func NewSchedule(cfg ScheduleConfig, seed int64) (Schedule, error) {
	if err := cfg.Validate(); err != nil {
		return Schedule{}, err
	}
	g := newGen(seed)
	switch cfg.Process {
	case ProcessPoisson:
		return gapSchedule(cfg, func() float64 { return g.exp() / cfg.Rate })
	case ProcessConstant:
		return gapSchedule(cfg, func() float64 { return 1 / cfg.Rate })
	case ProcessGamma:
		k := 1 / cfg.Burstiness // shape; mean gap k*theta = 1/rate
		theta := 1 / (cfg.Rate * k)
		return gapSchedule(cfg, func() float64 { return g.gamma(k) * theta })
	case ProcessOnOff, ProcessRamp:
		return rateSchedule(cfg, g)
	case ProcessTrace:
		return traceSchedule(cfg)
	}
	return Schedule{}, fmt.Errorf("schedule.process %q is unknown", cfg.Process)
}

// gapSchedule accumulates independent gaps (renewal process). The first
// arrival of constant is at 0; the others start after one gap.
func gapSchedule(cfg ScheduleConfig, gap func() float64) (Schedule, error) {
	limit := cfg.Duration.Seconds()
	offs := make([]time.Duration, 0, expectedLen(cfg, cfg.Rate))
	t := 0.0
	if cfg.Process != ProcessConstant {
		t = gap()
	}
	for cfg.Count == 0 || len(offs) < cfg.Count {
		if limit > 0 && t >= limit {
			break
		}
		if err := checkArrival(t, len(offs)); err != nil {
			return Schedule{}, err
		}
		offs = append(offs, secs(t))
		t += gap()
	}
	length := cfg.Duration
	if length == 0 { // the nominal time of Count arrivals, at most maxOffset
		length = secs(min(float64(len(offs))/cfg.Rate, maxOffset.Seconds()))
	}
	return Schedule{Offsets: offs, Length: length}, nil
}

// checkArrival refuses arrival n at t seconds when it cannot be a
// Duration or there are already MaxArrivals.
func checkArrival(t float64, n int) error {
	if !(t <= maxOffset.Seconds()) { // NaN too: it is no Duration
		if math.IsNaN(t) {
			return fmt.Errorf("schedule: arrival %d has no time (NaN); check schedule.rate and schedule.burstiness", n+1)
		}
		return fmt.Errorf("schedule: arrival %d would be at %.3g s, beyond the %v limit; raise the rate or lower schedule.count", n+1, t, maxOffset)
	}
	if n >= MaxArrivals {
		return fmt.Errorf("schedule: more than %d arrivals; lower the rate, schedule.duration or schedule.burstiness", MaxArrivals)
	}
	return nil
}

func expectedLen(cfg ScheduleConfig, rate float64) int {
	n := cfg.Count
	if n == 0 {
		n = int(rate*cfg.Duration.Seconds()*1.05) + 16
	}
	return min(n, MaxArrivals)
}

// secs converts seconds to a Duration, rounding to the nanosecond.
func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
