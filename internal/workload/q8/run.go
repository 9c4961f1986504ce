package q8

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// q8 is Q8 RecoverySoak.
type q8 struct{ cfg *Config }

var _ workload.Workload = (*q8)(nil)

func (q *q8) Config() workload.Config { return q.cfg }

// Plan lists the soak and its faults.
func (q *q8) Plan(seed int64) (workload.Plan, error) {
	s, err := load.NewSchedule(q.cfg.Load.Schedule, seed)
	if err != nil {
		return workload.Plan{}, fmt.Errorf("q8.load.%w", err)
	}
	p := workload.Plan{Phases: []workload.PlannedPhase{{Name: "soak", Process: q.cfg.Load.Schedule.Process,
		Requests: s.Len(), Rate: s.Rate(), Span: s.Span(), Mix: q.cfg.Load.Mix(seed, s.Len()),
		Tokens: q.cfg.Load.Tokens(seed, s)}}}
	for _, e := range drill.Expand(q.cfg.Events()) {
		p.Notes = append(p.Notes, "event: "+e.String())
	}
	return p, nil
}

// Run soaks the target under the fault schedule.
func (q *q8) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	dc := q.cfg.Drill
	dc.Events = q.cfg.Events()
	samples := &sampler{}
	stop := samples.start(env.Target, q.cfg.Engines)
	r, err := drill.Drive(ctx, env, "soak", q.cfg.Load, dc)
	stop()
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q8: %w", err)
	}
	extra, details := q.measure(r, samples)
	var notes []string
	if samples.n == 0 {
		notes = append(notes, "RSS and open files not sampled: the target is not the embedded stack and its /metrics has no process_resident_memory_bytes and process_open_fds")
	}
	return r.Outcome(extra, details, notes...)
}

type details struct {
	P99Drift drill.Drift `json:"p99_drift"` // of recovery.metric, ms per minute
	RSSDrift drill.Drift `json:"rss_drift"` // MiB per minute
	FDDrift  drill.Drift `json:"fd_drift"`  // open files per minute
}

func (q *q8) measure(r *drill.Run, s *sampler) (map[string]float64, details) {
	var after []float64
	recovered := 0
	for _, x := range r.Recovery {
		if x.Action == drill.Resume || x.Action == drill.Restart || (x.Action == drill.Slowdown && isEnd(r, x.Seq)) {
			continue // undo events: the fault's recovery counts from the fault
		}
		if x.Recovered && x.AfterMs != nil {
			recovered++
			after = append(after, *x.AfterMs)
		}
	}
	faults := countFaults(r)
	ws := r.Windows
	every := max(int(dcWidth(q.cfg)/dcStep(q.cfg)), 1)
	p99 := series.DriftOf(ws, q.cfg.Drill.Recovery.Metric, every)
	rss, fd := s.drifts(q.warmup())
	d := details{P99Drift: drill.DriftJSON(p99), RSSDrift: drill.DriftJSON(rss), FDDrift: drill.DriftJSON(fd)}
	extra := map[string]float64{"faults": float64(faults), "faults_recovered": float64(recovered),
		"recovery_max_ms": -1, "p99_drift_ms_per_min": drill.Finite(p99.SlopePerMin, 0),
		"rss_drift_mib_per_min": drill.Finite(rss.SlopePerMin, 0), "fd_drift_per_min": drill.Finite(fd.SlopePerMin, 0)}
	if len(after) > 0 && recovered == faults {
		extra["recovery_max_ms"] = slices.Max(after)
	}
	return extra, d
}

func dcWidth(c *Config) time.Duration { return c.Drill.Series.WithDefaults().Width }
func dcStep(c *Config) time.Duration  { return c.Drill.Series.WithDefaults().Step }

// isEnd reports whether event seq is the factor-1 end of a slowdown.
func isEnd(r *drill.Run, seq int) bool {
	for _, e := range r.Events {
		if e.Seq == seq {
			return e.Detail == "factor 1"
		}
	}
	return false
}

// countFaults counts the performed fault events (kill, pause, slowdown > 1).
func countFaults(r *drill.Run) int {
	n := 0
	for _, e := range r.Events {
		if e.Outcome == drill.OutcomeOK && (e.Action == drill.Kill || e.Action == drill.Pause || (e.Action == drill.Slowdown && e.Detail != "factor 1")) {
			n++
		}
	}
	return n
}

// sampler reads the summed RSS and open files of the engine processes
// once a second (or a URL target's /metrics).
type sampler struct {
	mu            sync.Mutex
	n             int
	mins, rss, fd []float64
}

func (s *sampler) start(t *target.Target, ids []string) (stop func()) {
	f, embedded := t.Faults()
	client := &http.Client{}
	done, finished := make(chan struct{}), make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if embedded {
				s.sample(f, ids, time.Since(t0))
			} else if rss, fds, ok := scrape(context.Background(), client, t.URL()); ok {
				s.add(time.Since(t0), rss, fds)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (s *sampler) sample(f target.Faults, ids []string, at time.Duration) {
	var pids []int // the engine processes; the embedded gateway shares the harness's process and its records
	for _, id := range ids {
		if pid, err := f.Process(id); err == nil {
			pids = append(pids, pid)
		}
	}
	var rss, fds float64
	for _, pid := range pids {
		rss += rssMiB(pid)
		ents, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
		fds += float64(len(ents))
	}
	s.add(at, rss, fds)
}

func (s *sampler) add(at time.Duration, rss, fds float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.mins, s.rss, s.fd = append(s.mins, at.Minutes()), append(s.rss, rss), append(s.fd, fds)
}

// drifts fits the samples taken from `from` on (start-up growth of
// connection pools and heaps before it is not drift).
func (s *sampler) drifts(from time.Duration) (rss, fd series.Drift) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.mins) && s.mins[i] < from.Minutes() {
		i++
	}
	return series.DriftOfPoints(s.mins[i:], s.rss[i:]), series.DriftOfPoints(s.mins[i:], s.fd[i:])
}

// warmup is when the first fault strikes: resource drift counts from there.
func (q *q8) warmup() time.Duration {
	ev := drill.Expand(q.cfg.Events())
	if len(ev) == 0 {
		return 0
	}
	return ev[0].At
}

// rssMiB reads VmRSS of pid from /proc (0 when unreadable).
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
