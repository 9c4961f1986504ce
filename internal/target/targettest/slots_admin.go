package targettest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

// admin answers 404 for h when the server has no admin API.
func (s *Slots) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.NoAdmin {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}

// orderOf maps a policy of the reference stack to a queue order.
var orderOf = map[string]string{
	protocol.PolicyFIFO: OrderFIFO, protocol.PolicyPriority: OrderPriority, protocol.PolicySLOAware: OrderPriority,
	protocol.PolicyFairShare: OrderFair, protocol.PolicyHybrid: OrderPriority, protocol.PolicyAdaptive: OrderPriority,
}

func (s *Slots) adminPolicy(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodPost {
		var b struct{ Policy string }
		json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&b)
		order, ok := orderOf[b.Policy]
		if !ok {
			http.Error(w, `{"error":"unknown policy"}`, http.StatusBadRequest)
			return
		}
		s.policy, s.order = b.Policy, order
		clear(s.served)
	}
	fmt.Fprintf(w, `{"policy":%q}`, s.policy)
}

// engineJSON is an engine as GET /admin/engines lists it.
type engineJSON struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Model   string `json:"model"`
	State   string `json:"state"`
	Running int    `json:"running"`
	Slots   int    `json:"slots"`
}

func (s *Slots) engineJSON(e *slotEngine) engineJSON {
	j := engineJSON{ID: e.id, Kind: "llm", Model: "fake-llm", State: e.state, Slots: len(e.slots)}
	for _, sl := range e.slots {
		if sl.busy {
			j.Running++
		}
	}
	return j
}

func (s *Slots) listEngines(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var list []engineJSON
	for _, e := range s.engines {
		list = append(list, s.engineJSON(e))
	}
	s.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"data": list})
}

// postEngine adds an LLM engine of the configured slots (none with
// FixedPool), whatever profile or slots the request asks for: the
// capacity stays known.
func (s *Slots) postEngine(w http.ResponseWriter, r *http.Request) {
	var spec struct{ ID, Kind string }
	json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&spec)
	if spec.Kind != "llm" {
		http.Error(w, `{"error":"only llm engines"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slots := s.cfg.Slots
	if s.cfg.FixedPool {
		slots = 0
	}
	e := s.addEngine(slots)
	if spec.ID != "" {
		e.id = spec.ID
	}
	s.dispatch()
	json.NewEncoder(w).Encode(s.engineJSON(e))
}

// drainEngine stops giving the engine's slots out and waits until they
// are idle.
func (s *Slots) drainEngine(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for {
		s.mu.Lock()
		i := slices.IndexFunc(s.engines, func(e *slotEngine) bool { return e.id == id })
		if i < 0 {
			s.mu.Unlock()
			http.NotFound(w, r)
			return
		}
		e := s.engines[i]
		e.state = "draining"
		busy := slices.ContainsFunc(e.slots, func(sl *slot) bool { return sl.busy })
		s.mu.Unlock()
		if !busy {
			fmt.Fprint(w, `{}`)
			return
		}
		if !sleepUntil(r, time.Now().Add(5*time.Millisecond)) {
			return
		}
	}
}

func (s *Slots) removeEngine(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.engines)
	s.engines = slices.DeleteFunc(s.engines, func(e *slotEngine) bool { return e.id == id })
	if len(s.engines) == n {
		http.NotFound(w, r)
		return
	}
	fmt.Fprint(w, `{}`)
}

// metrics exposes the queue depth under QueueMetric (404 when unset).
func (s *Slots) metrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.QueueMetric == "" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	waiting, running := len(s.waiting), 0
	for _, e := range s.engines {
		for _, sl := range e.slots {
			if sl.busy {
				running++
			}
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE %s gauge\n%s{model_name=\"fake-llm\"} %d\n", s.cfg.QueueMetric, s.cfg.QueueMetric, waiting)
	fmt.Fprintf(w, "# TYPE fake_requests_running gauge\nfake_requests_running %d\n", running)
}
