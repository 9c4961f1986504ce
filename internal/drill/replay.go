package drill

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// FileDrill is drill.json: what the drill observed that its requests do
// not say — the requests sent (a lost one may leave no record) and the
// capacity probe's levels as they ran (their windows and the plateau,
// judged live).
const FileDrill = "drill.json"

// drillRecord is drill.json.
type drillRecord struct {
	Sent  int          `json:"sent"`
	Probe *ProbeRecord `json:"probe,omitempty"`
}

// ProbeRecord is what the capacity probe observed as it ran: the
// measured window of each level and of the hold, on the run's clock, and
// whether it judged a plateau. The capacity is computed from these and
// the probe's requests (capacityOf).
type ProbeRecord struct {
	Levels     []LevelWindow `json:"levels"`
	Plateau    bool          `json:"plateau"`
	Hold       LevelWindow   `json:"hold"` // zero: no hold was measured
	DurationNS int64         `json:"duration_ns"`
	Sent       int           `json:"sent"`
}

// LevelWindow is a level's clients and measured part, ns since the run's
// start.
type LevelWindow struct {
	Clients int   `json:"clients"`
	FromNS  int64 `json:"from_ns"`
	ToNS    int64 `json:"to_ns"`
}

func (lv Level) window() LevelWindow {
	return LevelWindow{Clients: lv.Clients, FromNS: lv.fromNS, ToNS: lv.toNS}
}

// capacityOf is the capacity the probe's requests recs show over the
// windows pb recorded: each level read as work done once every request
// has ended, the rate at the plateau read off the hold (else the best
// level, a lower bound).
func (l *Load) capacityOf(recs []record.Request, pb ProbeRecord) Capacity {
	p := l.Probe.WithDefaults()
	c := Capacity{Saturated: pb.Plateau, Duration: time.Duration(pb.DurationNS), Sent: pb.Sent}
	typ, share := l.bottleneck(), l.bottleneckShare()
	for _, w := range pb.Levels {
		lv := level(recs, w.FromNS, w.ToNS, w.Clients)
		lv.Throughput = mixRate(recs, lv, typ, share)
		c.Levels = append(c.Levels, lv)
	}
	hold := Level{Clients: pb.Hold.Clients, fromNS: pb.Hold.FromNS, toNS: pb.Hold.ToNS}
	if c.Saturated && hold.toNS > hold.fromNS {
		c.Rate = mixRate(recs, hold, typ, share)
		c.Low, c.High = batchMeans(recs, hold, typ, share, 8)
		c.Hold, c.HoldFrom, c.HoldClients, c.HoldOK = time.Duration(hold.toNS-hold.fromNS), time.Duration(hold.fromNS), hold.Clients, okIn(recs, hold, typ)
		_, c.Engines = fluid(recs, []Level{hold})
	} else if best := bestLevel(c.Levels, p.Gain); best >= 0 {
		c.Saturated = false
		c.Rate = c.Levels[best].Throughput
		_, c.Engines = fluid(recs, c.Levels[best:best+1])
	}
	return c
}

// file is drill.json.
func (r *Run) file() ([]byte, error) {
	d := drillRecord{Sent: r.Sent}
	if c := r.Sizing.Capacity; c != nil {
		d.Probe = c.probe
	}
	return json.Marshal(d)
}

// FromRecords is the drill of a finished run read back from its
// records: the load's phase named phase (and the capacity probe's),
// its requests, events.jsonl and drill.json — measured again as Drive
// measured it, with l and cfg the run's configuration. A probe that
// reached no plateau gives the run and a *NoPlateauError, as Drive does.
func FromRecords(rec workload.Records, phase string, l Load, cfg Config) (*Run, error) {
	r := &Run{cfg: cfg, planned: Expand(cfg.Events), Sizing: Sizing{Rate: l.Schedule.Rate, Bottleneck: l.bottleneck()}}
	var d drillRecord
	if err := json.Unmarshal(rec.Files[FileDrill], &d); err != nil {
		return nil, fmt.Errorf("%s: %w", FileDrill, err)
	}
	var probeRecs []record.Request
	for _, q := range rec.Requests {
		switch {
		case q.Kind != "request":
		case q.Phase == phase:
			r.Records = append(r.Records, q)
		case q.Phase == "capacity":
			probeRecs = append(probeRecs, q)
		}
	}
	for i := range rec.Phases {
		switch p := rec.Phases[i]; p.Name {
		case phase:
			r.Phase = p
		case "capacity":
			r.ProbePhase = &rec.Phases[i]
		}
	}
	if err := r.size(l, d.Probe, probeRecs); err != nil {
		return r, err
	}
	r.Sent = d.Sent
	events, err := readEvents(rec.Files[FileNames[0]])
	if err != nil {
		return nil, err
	}
	r.Events = events
	return r, r.measure()
}

// size sets the rate as Drive did: the configured capacity, or the
// probe's measured one.
func (r *Run) size(l Load, pb *ProbeRecord, recs []record.Request) error {
	switch {
	case l.Utilisation > 0 && l.Capacity > 0:
		c := Capacity{Rate: l.Capacity, Low: l.Capacity, High: l.Capacity, Saturated: true, UserSet: true}
		r.Sizing.Capacity, r.Sizing.Utilisation, r.Sizing.Rate = &c, l.Utilisation, l.Utilisation*c.Rate
	case l.Utilisation > 0:
		if pb == nil {
			return fmt.Errorf("%s records no capacity probe", FileDrill)
		}
		c := l.capacityOf(recs, *pb)
		c.probe = pb
		r.Sizing.Capacity = &c
		if !c.Saturated {
			return &NoPlateauError{Capacity: c}
		}
		r.Sizing.Utilisation, r.Sizing.Rate = l.Utilisation, l.Utilisation*c.Rate
	}
	return nil
}

// readEvents reads events.jsonl.
func readEvents(b []byte) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		var e Result
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", FileNames[0], line, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
