package q8

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
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
	return q.cfg.Base.Plan("q8", "soak", seed, q.cfg.Events())
}

// Run soaks the target under the fault schedule.
func (q *q8) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	dc := q.cfg.Drill
	dc.Events = q.cfg.Events()
	samples := &sampler{t0: env.Start}
	stop := samples.start(env.Target, q.cfg.Engines)
	r, err := drill.Drive(ctx, env, phaseName, q.cfg.Load, dc)
	stop()
	o, err := q.outcome(r, err, samples)
	if err == nil {
		o.Files = append(o.Files, samples.file())
	}
	return o, err
}

// phaseName is the drill's load phase.
const phaseName = "soak"

// Recompute computes the result from the run's records alone
// (drill.FromRecords: the requests, events.jsonl, drill.json; the
// process samples of process.jsonl).
func (q *q8) Recompute(rec workload.Records) (result.Result, error) {
	dc := q.cfg.Drill
	dc.Events = q.cfg.Events()
	samples, err := readSamples(rec.Files[fileProcess])
	if err != nil {
		return result.Result{}, err
	}
	r, err := drill.FromRecords(rec, phaseName, q.cfg.Load, dc)
	o, err := q.outcome(r, err, samples)
	return o.Result, err
}

// outcome measures the drill r that Drive (or FromRecords) returned with
// err, beside the process samples.
func (q *q8) outcome(r *drill.Run, err error, samples *sampler) (workload.Outcome, error) {
	if np := (*drill.NoPlateauError)(nil); errors.As(err, &np) {
		return r.Aborted(drill.DefLost, np), nil
	}
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q8: %w", err)
	}
	samples.from = r.Phase.Start + q.warmup()
	var notes []string
	if samples.n == 0 {
		notes = append(notes, "RSS and open files not sampled: the target is not the embedded stack and its /metrics has no process_resident_memory_bytes and process_open_fds")
	}
	return r.Outcome(q.result(r, samples), notes...)
}

// Q8's metrics (lost, sent and availability are every drill's).
var (
	defFaults      = result.Def{Name: "faults", Unit: result.Count, Direction: result.Higher}
	defRecovered   = result.Def{Name: "faults_recovered", Unit: result.Count, Direction: result.Higher}
	defViolated    = result.Def{Name: "faults_violated", Unit: result.Count, Direction: result.Lower}
	defRecoveryMax = result.Def{Name: "recovery_max_ms", Unit: result.Ms, Direction: result.Lower}
	defP99Drift    = result.Def{Name: "p99_drift_ms_per_min", Unit: result.MsPerMin, Direction: result.Lower}
	defRSSDrift    = result.Def{Name: "rss_drift_mib_per_min", Unit: result.MiBPerMin, Direction: result.Lower}
	defFDDrift     = result.Def{Name: "fd_drift_per_min", Unit: result.PerMin, Direction: result.Lower}
)

// defs are the metrics a q8.target may name.
var defs = []result.Def{drill.DefLost, drill.DefAvailability, defRecoveryMax, defP99Drift}

// result is Q8's answer: lost requests first, by class, then the slowest
// recovery from a fault (never when one did not recover), and the drifts.
func (q *q8) result(r *drill.Run, s *sampler) result.Result {
	faults, recovered, violated := len(r.Recovery), 0, 0
	for _, x := range r.Recovery {
		switch x.Verdict() {
		case drill.NoViolation:
			recovered++
		case drill.Recovered:
			recovered, violated = recovered+1, violated+1
		case drill.Censored, drill.NeverRecovered:
			violated++
		}
	}
	recMax := drill.SlowestRecovery(defRecoveryMax, r.Recovery)
	every := max(int(dcWidth(q.cfg)/dcStep(q.cfg)), 1)
	rss, fd := s.drifts()
	noSample := "RSS and open files were not sampled"
	lostMs := r.LostMetrics()
	ms := []result.Metric{defFaults.Measure(float64(faults), max(faults, 1), ""), defRecovered.Measure(float64(recovered), max(faults, 1), ""),
		defViolated.Measure(float64(violated), max(faults, 1), ""), recMax,
		p99Drift(drill.SteadyDrift(r.Windows, q.cfg.Drill.Recovery.Metric, every, r.Recovery)),
		drill.DriftMetric(defRSSDrift, rss, noSample), drill.DriftMetric(defFDDrift, fd, noSample)}
	ans := fmt.Sprintf("%s of %d requests lost across %d faults (%s; availability %s); slowest recovery %s; %s drift %s",
		result.Short(lostMs[0]), r.Lost.Sent, faults, lostByClass(lostMs), result.Short(lostMs[2]), result.Format(recMax), q.cfg.Drill.Recovery.Metric, result.Format(ms[4]))
	return result.New(ans, lostMs[0], ms...)
}

// p99Drift is the steady windows' drift as a metric, saying how it was
// read.
func p99Drift(d series.Drift) result.Metric {
	m := drill.DriftMetric(defP99Drift, d, "too few steady windows with a value")
	if m.Measured() {
		m = m.WithReason(fmt.Sprintf("least-squares slope over %d steady non-overlapping windows (none in a fault's disturbed span); 95 %% interval Newey–West (AR(1)-prewhitened, fixed-b)", d.Points))
	}
	return m
}

// lostByClass is "truncated 3, reset 1" (the classes with lost
// requests), or "none by class".
func lostByClass(ms []result.Metric) string {
	var parts []string
	for _, m := range ms {
		if c, ok := strings.CutPrefix(m.Name, "lost_"); ok && m.Measured() && m.Value > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", c, result.Short(m)))
		}
	}
	if len(parts) == 0 {
		return "none by class"
	}
	return strings.Join(parts, ", ")
}

func dcWidth(c *Config) time.Duration { return c.Drill.Series.WithDefaults().Width }
func dcStep(c *Config) time.Duration  { return c.Drill.Series.WithDefaults().Step }

// sampler reads the summed RSS and open files of the engine processes
// once a second (or a URL target's /metrics).
type sampler struct {
	t0            time.Time     // the run's start: samples are timed from it
	from          time.Duration // drifts fit the samples from this offset on
	mu            sync.Mutex
	n             int
	at            []time.Duration
	mins, rss, fd []float64
}

func (s *sampler) start(t *target.Target, ids []string) (stop func()) {
	f, embedded := t.Faults()
	client := &http.Client{}
	done, finished := make(chan struct{}), make(chan struct{})
	t0 := s.t0
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
	var pids []int // the engine processes and a split stack's gateway; an in-process gateway shares the harness's process and its records
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
	s.at = append(s.at, at)
	s.mins, s.rss, s.fd = append(s.mins, at.Minutes()), append(s.rss, rss), append(s.fd, fds)
}

// fileProcess is Q8's record of the process samples, one line each.
const fileProcess = "process.jsonl"

// processSample is a line of process.jsonl: the summed RSS and open
// files of the target's processes at at_ns since the run's start.
type processSample struct {
	AtNS    int64   `json:"at_ns"`
	RSSMiB  float64 `json:"rss_mib"`
	OpenFDs float64 `json:"open_fds"`
}

// file is process.jsonl.
func (s *sampler) file() record.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i, at := range s.at {
		_ = enc.Encode(processSample{AtNS: int64(at), RSSMiB: s.rss[i], OpenFDs: s.fd[i]}) // finite: add's sources are
	}
	return record.File{Name: fileProcess, Data: b.Bytes()}
}

// readSamples reads process.jsonl back (none when it is empty).
func readSamples(b []byte) (*sampler, error) {
	s := &sampler{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		var p processSample
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", fileProcess, line, err)
		}
		s.add(time.Duration(p.AtNS), p.RSSMiB, p.OpenFDs)
	}
	return s, sc.Err()
}

// drifts fits the samples taken from s.from on (start-up growth of
// connection pools and heaps before it is not drift).
func (s *sampler) drifts() (rss, fd series.Drift) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.mins) && s.mins[i] < s.from.Minutes() {
		i++
	}
	return series.DriftOfPoints(s.mins[i:], s.rss[i:]), series.DriftOfPoints(s.mins[i:], s.fd[i:])
}

// warmup is when the first fault strikes, from the start of the load:
// resource drift counts from there.
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
