package targettest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

// Queue orders of a Slots server.
const (
	OrderFIFO     = "fifo"     // arrival order
	OrderLIFO     = "lifo"     // the newest first (a scheduler that inverts priorities)
	OrderPriority = "priority" // most urgent X-Request-Priority first, then arrival
	OrderFair     = "fair"     // the tenant served least so far first, then arrival
)

// SlotsConfig configures a Slots server.
type SlotsConfig struct {
	Engines int           // LLM engines at the start (default 1)
	Slots   int           // slots per engine (default 1)
	TTFT    time.Duration // from taking a slot to the first token (default 10ms)
	Service time.Duration // how long a chat holds its slot: its last token (default 100ms, ≥ TTFT)
	Tokens  int           // tokens per chat (default 4)
	Order   string        // the queue's order (default fifo); POST /admin/policy changes it
	// Lockstep releases slots only at multiples of Service, all together
	// (an engine stepping its batch): requests dispatched at one release
	// start at the same instant. Their first tokens are then written in
	// reverse order of dispatch, TieSpread apart: a tie that a timing
	// rule with no tolerance reads as the later request served first.
	Lockstep  bool
	TieSpread time.Duration
	// FailTenant's requests fail (HTTP 500, before the first token) one
	// in FailEvery (0: none).
	FailTenant string
	FailEvery  int
	// QueueMetric, when set, is the name under which GET /metrics exposes
	// the number of waiting requests (e.g. vllm:num_requests_waiting).
	QueueMetric string
	// QueueHeader answers each chat with X-Sagebench-Queue-Us.
	QueueHeader bool
	// NoAdmin answers 404 on /admin/policy and /admin/engines.
	NoAdmin bool
	// FixedPool: engines added through the admin API bring no slots of
	// their own (a pool that does not scale).
	FixedPool bool
}

func (c *SlotsConfig) defaults() {
	c.Engines, c.Slots, c.Tokens = max(c.Engines, 1), max(c.Slots, 1), max(c.Tokens, 1)
	if c.TTFT <= 0 {
		c.TTFT = 10 * time.Millisecond
	}
	if c.Service <= 0 {
		c.Service = 100 * time.Millisecond
	}
	c.Service = max(c.Service, c.TTFT)
	if c.Order == "" {
		c.Order = OrderFIFO
	}
}

// Slots is a fake OpenAI-compatible target of known capacity for the
// statistics of the traffic workloads: one gateway queue in front of
// engines of Slots slots; a chat holds a slot for exactly Service, so
// the pool serves engines × slots ÷ Service chats per second and no
// more. Slot times are kept on a virtual clock — a slot frees exactly
// Service after it was taken, however late its timer fires — so a loaded
// machine delays answers but does not change the capacity. Embeddings
// are answered at once. It binds 127.0.0.1 on a free port.
type Slots struct {
	*httptest.Server
	cfg   SlotsConfig
	epoch time.Time

	mu      sync.Mutex
	order   string
	engines []*slotEngine
	waiting []*slotWaiter
	seq     int64
	served  map[string]int // per tenant, for OrderFair
	failN   map[string]int
	chats   int
	added   int
	policy  string
	// lastAt and inBatch number the starts of one lockstep release.
	lastAt  time.Time
	inBatch int
}

type slotEngine struct {
	id    string
	state string // active, draining
	slots []*slot
}

type slot struct {
	busy   bool
	freeAt time.Time // virtual
}

type slotWaiter struct {
	arrived time.Time
	seq     int64
	rank    int
	tenant  string
	start   chan slotGrant
}

// slotGrant is a waiter's virtual start and its place in a batch of
// simultaneous starts.
type slotGrant struct {
	at    time.Time
	batch int
}

// NewSlots starts a Slots server; it is closed when the test ends.
func NewSlots(tb interface{ Cleanup(func()) }, cfg SlotsConfig) *Slots {
	cfg.defaults()
	s := &Slots{cfg: cfg, epoch: time.Now(), order: cfg.Order, policy: protocol.PolicyFIFO,
		served: map[string]int{}, failN: map[string]int{}}
	for range cfg.Engines {
		s.addEngine(cfg.Slots)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", (&Server{}).models)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/embeddings", s.embed)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("/admin/policy", s.admin(s.adminPolicy))
	mux.HandleFunc("GET /admin/engines", s.admin(s.listEngines))
	mux.HandleFunc("POST /admin/engines", s.admin(s.postEngine))
	mux.HandleFunc("POST /admin/engines/{id}/drain", s.admin(s.drainEngine))
	mux.HandleFunc("DELETE /admin/engines/{id}", s.admin(s.removeEngine))
	s.Server = httptest.NewServer(mux)
	tb.Cleanup(s.Close)
	return s
}

// Capacity is the pool's capacity now: active slots ÷ Service, req/s.
func (s *Slots) Capacity() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.engines {
		if e.state == "active" {
			n += len(e.slots)
		}
	}
	return float64(n) / s.cfg.Service.Seconds()
}

// Chats is the number of chat requests received.
func (s *Slots) Chats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chats
}

// Waiting is the number of requests queued now.
func (s *Slots) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)
}

func (s *Slots) addEngine(slots int) *slotEngine {
	s.added++
	e := &slotEngine{id: fmt.Sprintf("fake-llm-%d", s.added-1), state: "active"}
	for range slots {
		e.slots = append(e.slots, &slot{})
	}
	s.engines = append(s.engines, e)
	return e
}

// enqueue queues a chat arriving now and dispatches what it can.
func (s *Slots) enqueue(r *http.Request) *slotWaiter {
	w := &slotWaiter{arrived: time.Now(), tenant: r.Header.Get(protocol.HeaderTenant), start: make(chan slotGrant, 1)}
	w.rank = slices.Index(protocol.Priorities(), r.Header.Get(protocol.HeaderPriority))
	if w.rank < 0 {
		w.rank = len(protocol.Priorities())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	w.seq = s.seq
	s.waiting = append(s.waiting, w)
	s.dispatch()
	return w
}

// leave takes a waiter that gave up out of the queue.
func (s *Slots) leave(w *slotWaiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting = slices.DeleteFunc(s.waiting, func(x *slotWaiter) bool { return x == w })
}

// dispatch gives free slots of active engines to waiters, in the queue's
// order. Called with mu held.
func (s *Slots) dispatch() {
	for len(s.waiting) > 0 {
		sl := s.freeSlot()
		if sl == nil {
			return
		}
		i := s.next()
		w := s.waiting[i]
		s.waiting = slices.Delete(s.waiting, i, i+1)
		s.served[w.tenant]++
		at := w.arrived
		if sl.freeAt.After(at) {
			at = sl.freeAt
		}
		if s.cfg.Lockstep {
			k := (at.Sub(s.epoch) + s.cfg.Service - 1) / s.cfg.Service
			at = s.epoch.Add(k * s.cfg.Service)
		}
		sl.busy, sl.freeAt = true, at.Add(s.cfg.Service)
		if !at.Equal(s.lastAt) {
			s.lastAt, s.inBatch = at, 0
		}
		w.start <- slotGrant{at: at, batch: s.inBatch}
		s.inBatch++
		time.AfterFunc(time.Until(sl.freeAt), func() { s.release(sl) })
	}
}

func (s *Slots) release(sl *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.busy = false
	s.dispatch()
}

// freeSlot is the idle slot of an active engine that frees earliest.
func (s *Slots) freeSlot() *slot {
	var best *slot
	for _, e := range s.engines {
		if e.state != "active" {
			continue
		}
		for _, sl := range e.slots {
			if !sl.busy && (best == nil || sl.freeAt.Before(best.freeAt)) {
				best = sl
			}
		}
	}
	return best
}

// next is the index of the waiter the queue's order serves next.
func (s *Slots) next() int {
	better := func(a, b *slotWaiter) bool {
		switch s.order {
		case OrderLIFO:
			return a.seq > b.seq
		case OrderPriority:
			return a.rank < b.rank || a.rank == b.rank && a.seq < b.seq
		case OrderFair:
			sa, sb := s.served[a.tenant], s.served[b.tenant]
			return sa < sb || sa == sb && a.seq < b.seq
		}
		return a.seq < b.seq
	}
	best := 0
	for i, w := range s.waiting {
		if better(w, s.waiting[best]) {
			best = i
		}
	}
	return best
}

// fails says whether this request of tenant is one that fails.
func (s *Slots) fails(tenant string) bool {
	if s.cfg.FailEvery <= 0 || tenant != s.cfg.FailTenant {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN[tenant]++
	return s.failN[tenant]%s.cfg.FailEvery == 0
}

func (s *Slots) chat(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.chats++
	s.mu.Unlock()
	var req struct {
		Stream bool `json:"stream"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
	if s.fails(r.Header.Get(protocol.HeaderTenant)) {
		http.Error(w, `{"error":{"message":"injected failure"}}`, http.StatusInternalServerError)
		return
	}
	wt := s.enqueue(r)
	var g slotGrant
	select {
	case g = <-wt.start:
	case <-r.Context().Done():
		s.leave(wt)
		return
	}
	w.Header().Set(protocol.HeaderEngine, "fake-llm")
	if s.cfg.QueueHeader {
		w.Header().Set(protocol.HeaderQueueWait, strconv.FormatInt(g.at.Sub(wt.arrived).Microseconds(), 10))
	}
	first := g.at.Add(s.cfg.TTFT)
	if s.cfg.Lockstep {
		first = first.Add(-time.Duration(g.batch) * s.cfg.TieSpread)
	}
	if !req.Stream {
		sleepUntil(r, g.at.Add(s.cfg.Service))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":%d,"total_tokens":%d}}`, s.cfg.Tokens, s.cfg.Tokens+3)
		return
	}
	s.stream(w, r, first, g.at.Add(s.cfg.Service))
}

// stream writes the tokens: the first at first, the last at last, the
// others evenly between.
func (s *Slots) stream(w http.ResponseWriter, r *http.Request, first, last time.Time) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	n := s.cfg.Tokens
	for i := range n {
		at := first
		if n > 1 {
			at = first.Add(time.Duration(i) * last.Sub(first) / time.Duration(n-1))
		}
		if !sleepUntil(r, at) {
			return
		}
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		if fl != nil {
			fl.Flush()
		}
	}
	fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", n, n+3)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// sleepUntil waits until at or the client's end; false: the client left.
func sleepUntil(r *http.Request, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Slots) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"object":"list","data":[`)
	for i := range req.Input {
		if i > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, `{"object":"embedding","index":%d,"embedding":[0.6,0.8]}`, i)
	}
	fmt.Fprintf(w, `],"model":"fake-embed","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, len(req.Input), len(req.Input))
}
