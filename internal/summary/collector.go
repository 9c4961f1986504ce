package summary

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
)

// Label keys of the groups a Collector keeps.
const (
	LabelType     = "type"
	LabelTenant   = "tenant"
	LabelPriority = "priority"
	LabelPhase    = "phase"
	LabelStage    = "stage"
)

// groupSets lists the label combinations summarised for every request that
// is not a stage: one group per distinct value (or pair of values). Keys
// within a set are in sorted order (groupOf builds labelKey from them).
var groupSets = [][]string{
	{LabelPhase, LabelType},
	{LabelType},
	{LabelTenant},
	{LabelPriority},
	{LabelPhase},
}

// acc accumulates one group.
type acc struct {
	labels                        map[string]string
	count, errors, met            int
	streamErrors                  int // failed of a type that streams (protocol.Streams)
	rejected                      int // failed with a 4xx other than 429 (see rejectedTypes)
	e2e, service, ttft, tpot, itl *dist
}

func newAcc(labels map[string]string) *acc {
	return &acc{labels: labels, e2e: newDist(), service: newDist(),
		ttft: newDist(), tpot: newDist(), itl: newDist()}
}

func (a *acc) add(r *record.Request) {
	a.count++
	if !r.OK {
		a.errors++
		if protocol.Streams(r.Type) {
			a.streamErrors++
		}
		if r.Status >= 400 && r.Status < 500 && r.Status != 429 {
			a.rejected++
		}
		return
	}
	if r.SLOMet {
		a.met++
	}
	a.e2e.add(r.E2EMs)
	a.service.add(r.ServiceMs)
	if r.FirstToken > 0 {
		a.ttft.add(r.TTFTMs)
	}
	if r.TPOTMs > 0 {
		a.tpot.add(r.TPOTMs)
	}
	for i := 1; i < len(r.TokenNS); i++ {
		a.itl.add(float64(r.TokenNS[i]-r.TokenNS[i-1]) / 1e6)
	}
}

// phaseAcc tracks what the driver delivered within one phase.
type phaseAcc struct {
	sent     int
	lastSent int64 // ns offset of the latest actual send
	lag      *dist
}

// Collector accumulates requests into group histograms. It is safe for
// concurrent use; the zero value is not usable, call NewCollector.
type Collector struct {
	mu     sync.Mutex
	all    *acc
	lag    *dist
	groups map[string]*acc
	phases map[string]*phaseAcc
	// routes caches, per distinct label values, the groups and phase a
	// request feeds, so that Add does no string building or map
	// allocation per request.
	routes map[routeKey]*route
	// overTTFT and overE2E are client minus server time of the requests
	// that carry the server's own timing.
	overTTFT, overE2E *dist
	// lastPhase is the phase of the request added last (Live).
	lastPhase string
	retry     retryAcc
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{all: newAcc(nil), lag: newDist(), overTTFT: newDist(), overE2E: newDist(),
		groups: map[string]*acc{}, phases: map[string]*phaseAcc{}, routes: map[routeKey]*route{}}
}

// routeKey is the label values of a request that is not a stage.
type routeKey struct{ typ, tenant, priority, phase string }

// route is where a request with some routeKey goes: its groups (one per
// groupSets entry whose values are all set) and its phase.
type route struct {
	groups []*acc
	phase  *phaseAcc
}

// route returns the route of k, building it on first use.
func (c *Collector) route(k routeKey) *route {
	if rt := c.routes[k]; rt != nil {
		return rt
	}
	vals := map[string]string{LabelType: k.typ, LabelTenant: k.tenant, LabelPriority: k.priority, LabelPhase: k.phase}
	rt := &route{}
	for _, set := range groupSets {
		if g := c.groupOf(set, vals); g != nil {
			rt.groups = append(rt.groups, g)
		}
	}
	c.routes[k] = rt
	return rt
}

// Add records one request. Stage records (Kind "stage") only feed their
// per-stage group; requests and transactions feed every other group.
func (c *Collector) Add(r record.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Kind == "stage" {
		c.group(map[string]string{LabelStage: r.Stage}).add(&r)
		return
	}
	c.all.add(&r)
	c.lastPhase = r.Phase
	c.retry.add(&r)
	c.addOverhead(&r)
	rt := c.route(routeKey{r.Type, r.Tenant, r.Priority, r.Phase})
	for _, g := range rt.groups {
		g.add(&r)
	}
	if r.SentNS > 0 {
		c.lag.add(r.LagMs)
		if rt.phase == nil { // made by the first request actually sent
			rt.phase = c.phase(r.Phase)
		}
		p := rt.phase
		p.sent++
		p.lastSent = max(p.lastSent, r.SentNS)
		p.lag.add(r.LagMs)
	}
}

// addOverhead keeps the client-minus-server times of an ok request whose
// target reported its own timing (never below 0: the client's clock starts
// before the server's and stops after it).
func (c *Collector) addOverhead(r *record.Request) {
	if !r.OK || r.ServerE2EMs <= 0 {
		return
	}
	c.overE2E.add(max(r.ServiceMs-r.ServerE2EMs, 0))
	if r.FirstToken > 0 && r.ServerTTFTMs > 0 {
		c.overTTFT.add(max(r.TTFTMs-r.LagMs-r.ServerTTFTMs, 0))
	}
}

// groupOf returns the group of set's labels with values vals (indexed by
// label name), creating it; nil when a value is empty.
func (c *Collector) groupOf(set []string, vals map[string]string) *acc {
	var b strings.Builder
	for _, k := range set {
		if vals[k] == "" {
			return nil
		}
		b.WriteString(k + "=" + vals[k] + ";")
	}
	if g := c.groups[b.String()]; g != nil {
		return g
	}
	labels := map[string]string{}
	for _, k := range set {
		labels[k] = vals[k]
	}
	return c.group(labels)
}

func (c *Collector) group(labels map[string]string) *acc {
	k := labelKey(labels)
	g := c.groups[k]
	if g == nil {
		g = newAcc(labels)
		c.groups[k] = g
	}
	return g
}

func (c *Collector) phase(name string) *phaseAcc {
	p := c.phases[name]
	if p == nil {
		p = &phaseAcc{lag: newDist()}
		c.phases[name] = p
	}
	return p
}

// labelKey is a canonical string for a label set.
func labelKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + labels[k] + ";")
	}
	return b.String()
}

// Live is a snapshot for a progress line.
type Live struct {
	Done, Errors int
	// E2EP99Ms is the p99 E2E so far, a failed request counting +∞:
	// +Inf when failures reach its rank, NaN before any request ended.
	E2EP99Ms float64
	// Phase is the phase of the request that ended last ("" when none
	// has, or the workload names no phases): what the run is doing now.
	Phase string
}

// Live returns the counts so far and the p99 E2E, failures as +∞.
func (c *Collector) Live() Live {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Live{Done: c.all.count, Errors: c.all.errors, E2EP99Ms: c.all.e2e.quantileWithFailed(0.99, c.all.errors), Phase: c.lastPhase}
}

// Phase is one sub-run of a workload (a policy, the contended part …) as
// the driver saw it. Offsets are from the run's start (Run.StartedAt).
type Phase struct {
	Name         string
	Start        time.Duration // intended time of the schedule's zero
	End          time.Duration // when the last request of the phase ended
	Scheduled    int           // requests in the phase's schedule
	ScheduleSpan time.Duration // last intended offset − first (0: one request)
	Interrupted  bool          // the phase was cut short (ctx cancelled)
	ClosedLoop   bool          // fixed concurrency: no schedule to deliver
}

// Duration is the wall time of the phase: from the schedule's zero to the
// last completion, and never shorter than the schedule's span (a sample
// whose last arrival came early must not inflate rates above the offer).
func (p Phase) Duration() time.Duration { return max(p.End-p.Start, p.ScheduleSpan, 0) }
