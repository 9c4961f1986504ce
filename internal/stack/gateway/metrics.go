package gateway

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the gateway's Prometheus series. Every label is bounded:
// engine and model come from configuration, type and priority from fixed
// sets, status is a class ("2xx"), tenant is capped (see tenantLabel).
type metrics struct {
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	ttft      *prometheus.HistogramVec
	queueWait *prometheus.HistogramVec
	tokens    *prometheus.CounterVec
	retries   *prometheus.CounterVec
	ejections *prometheus.CounterVec
	sseWrites prometheus.Counter
	tenants   tenantLabels
	// prefixQueries and prefixHits count prompt tokens looked up in, and
	// served by, the engines' prefix caches (usage cached_tokens), as
	// vLLM's prefix_cache_queries/hits do; their totals make the ratio.
	prefixQueries, prefixHits *prometheus.CounterVec
	queried, hit              atomic.Int64
}

// countPrefix counts one finished chat's prompt and cached tokens.
func (m *metrics) countPrefix(engineID, model string, prompt, cached int) {
	m.prefixQueries.WithLabelValues(engineID, model).Add(float64(prompt))
	m.prefixHits.WithLabelValues(engineID, model).Add(float64(cached))
	m.queried.Add(int64(prompt))
	m.hit.Add(int64(cached))
}

// hitRatio is the prefix-cache hit rate so far: cached ÷ prompt tokens
// (0 before any prompt).
func (m *metrics) hitRatio() float64 {
	q := m.queried.Load()
	if q == 0 {
		return 0
	}
	return float64(m.hit.Load()) / float64(q)
}

func newMetrics(g *Gateway) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sagebench_gateway_requests_total", Help: "Requests answered, by type, model, tenant, priority and status class.",
		}, []string{"type", "model", "tenant", "priority", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sagebench_gateway_request_duration_seconds", Help: "End-to-end request time inside the gateway.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18),
		}, []string{"type", "model"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sagebench_gateway_ttft_seconds", Help: "Time to first token of chat completions, queueing included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"model", "priority"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sagebench_gateway_queue_wait_seconds", Help: "Time from admission to an engine slot, by kind and priority.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}, []string{"kind", "priority"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sagebench_gateway_tokens_total", Help: "Tokens processed, by engine, model and direction (prompt|completion).",
		}, []string{"engine", "model", "direction"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sagebench_gateway_retries_total", Help: "Requests retried on another engine after failing before their first token.",
		}, []string{"type"}),
		ejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sagebench_gateway_engine_ejections_total", Help: "Engines taken out of routing after failures.",
		}, []string{"engine"}),
		sseWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sagebench_gateway_stream_writes_total", Help: "Writes (one flush each) of streamed chat completions: tokens due at the same instant share one.",
		}),
		tenants: tenantLabels{max: g.cfg.MaxTenantLabels, seen: map[string]struct{}{}},
		prefixQueries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sagebench_gateway_prefix_cache_queries_total", Help: "Prompt tokens of finished chat completions, looked up in the engines' prefix caches.",
		}, []string{"engine", "model"}),
		prefixHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sagebench_gateway_prefix_cache_hits_total", Help: "Prompt tokens served from the engines' prefix caches (usage cached_tokens).",
		}, []string{"engine", "model"}),
	}
	ratio := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sagebench_gateway_prefix_cache_hit_ratio", Help: "Prefix-cache hits ÷ queries in tokens since the start, over all engines.",
	}, m.hitRatio)
	cs := []prometheus.Collector{m.requests, m.duration, m.ttft, m.queueWait, m.tokens, m.retries, m.ejections, m.sseWrites, &poolCollector{g: g},
		m.prefixQueries, m.prefixHits, ratio}
	for _, c := range cs {
		if err := g.cfg.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("registering gateway metrics (one registry per gateway): %w", err)
		}
	}
	// Process-wide collectors: a shared registry may hold them already.
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		var dup prometheus.AlreadyRegisteredError
		if err := g.cfg.Registry.Register(c); err != nil && !errors.As(err, &dup) {
			return nil, err
		}
	}
	return m, nil
}

func statusClass(code int) string {
	if code == 499 {
		return "cancelled"
	}
	return strconv.Itoa(code/100) + "xx"
}

// tenantLabels admits the first max distinct tenants as label values and
// folds the rest into "other", so a hostile client cannot blow up series.
type tenantLabels struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func (t *tenantLabels) label(tenant string) string {
	if tenant == "" {
		return "default"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.seen[tenant]; ok {
		return tenant
	}
	if len(t.seen) >= t.max {
		return "other"
	}
	t.seen[tenant] = struct{}{}
	return tenant
}

// poolCollector exports queue depths and per-engine occupancy at scrape time.
type poolCollector struct{ g *Gateway }

var (
	descQueued  = prometheus.NewDesc("sagebench_gateway_queue_depth", "Requests waiting for an engine slot.", []string{"kind"}, nil)
	descRunning = prometheus.NewDesc("sagebench_engine_running", "Requests the gateway has in flight on the engine.", []string{"engine", "model", "kind"}, nil)
	descSlots   = prometheus.NewDesc("sagebench_engine_slots", "The engine's concurrency (Load().Slots).", []string{"engine", "model", "kind"}, nil)
	descHealthy = prometheus.NewDesc("sagebench_engine_healthy", "1 when the engine is in routing, 0 when ejected, drained or draining.", []string{"engine", "model", "kind"}, nil)
)

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descQueued
	ch <- descRunning
	ch <- descSlots
	ch <- descHealthy
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.g.snapshot() {
		ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(s.Queued), s.Kind)
		for _, e := range s.Engines {
			healthy := 0.0
			if e.State == stateActive.String() {
				healthy = 1
			}
			ch <- prometheus.MustNewConstMetric(descRunning, prometheus.GaugeValue, float64(e.Running), e.ID, e.Model, s.Kind)
			ch <- prometheus.MustNewConstMetric(descSlots, prometheus.GaugeValue, float64(e.Slots), e.ID, e.Model, s.Kind)
			ch <- prometheus.MustNewConstMetric(descHealthy, prometheus.GaugeValue, healthy, e.ID, e.Model, s.Kind)
		}
	}
}

// PoolStatus is one queue's state for /admin/metrics.
type PoolStatus struct {
	Kind    string         `json:"kind"`
	Policy  string         `json:"policy"`
	Queued  int            `json:"queued"`
	Parked  int            `json:"parked"`
	Running int            `json:"running"`
	Engines []EngineStatus `json:"engines"`
}

// EngineStatus is one engine's state for /admin/engines and /admin/metrics.
type EngineStatus struct {
	ID         string  `json:"id"`
	Kind       string  `json:"kind"`
	Model      string  `json:"model"`
	Profile    string  `json:"profile,omitempty"`
	URL        string  `json:"url,omitempty"`
	State      string  `json:"state"`
	Running    int     `json:"running"`
	Slots      int     `json:"slots"`
	Load       float64 `json:"load"`
	EngineRun  int     `json:"engine_running"`
	EngineWait int     `json:"engine_waiting"`
	KVUsed     int     `json:"kv_used,omitempty"`
	KVCapacity int     `json:"kv_capacity,omitempty"`
	Served     int64   `json:"served"`
	Failed     int64   `json:"failed"`
	SpeedMs    float64 `json:"speed_ms"`
}

func (g *Gateway) snapshot() []PoolStatus {
	var out []PoolStatus
	for _, k := range []string{"llm", "embedding"} {
		p := g.pools[kindOf(k)]
		p.mu.Lock()
		ps := PoolStatus{Kind: k, Policy: p.policy, Queued: p.queued, Parked: len(p.parked)}
		if cur := p.adaptiveChoice(); cur != "" {
			ps.Policy += ":" + cur
		}
		for _, m := range p.members {
			ps.Running += m.running
			ps.Engines = append(ps.Engines, m.status())
		}
		p.mu.Unlock()
		out = append(out, ps)
	}
	return out
}

// adaptiveChoice names what adaptive delegates to in the longest model
// queue, or "" when the policy is not adaptive or nothing is queued.
func (p *pool) adaptiveChoice() string {
	cur, longest := "", 0
	for _, q := range p.queues {
		if a, ok := q.(interface{ Current() string }); ok && q.Len() > longest {
			cur, longest = a.Current(), q.Len()
		}
	}
	return cur
}

func (m *entry) status() EngineStatus {
	l := m.load()
	slots := m.slots()
	return EngineStatus{ID: m.id, Kind: string(m.kind), Model: m.model, Profile: m.eng.Profile, URL: m.eng.URL,
		State: m.state.String(), Running: m.running, Slots: slots, Load: float64(m.running) / float64(slots),
		EngineRun: l.Running, EngineWait: l.Waiting, KVUsed: l.KVUsed, KVCapacity: l.KVCapacity,
		Served: m.served, Failed: m.failed, SpeedMs: float64(m.speed.Microseconds()) / 1000}
}
