package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sagebench/sagebench/internal/stack/engine"
)

func kindOf(s string) engine.Kind { return engine.Kind(s) }

func (g *Gateway) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", g.api("llm", g.chat))
	mux.HandleFunc("POST /v1/embeddings", g.api("embedding", g.embeddings))
	mux.HandleFunc("POST /v1/retrieve", g.api("retrieve", g.retrieve))
	mux.HandleFunc("GET /v1/models", g.listModels)
	mux.HandleFunc("GET /health", g.health)
	mux.Handle("GET /metrics", promhttp.HandlerFor(g.cfg.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /admin/policy", g.admin(g.getPolicy))
	mux.HandleFunc("POST /admin/policy", g.admin(g.setPolicy))
	mux.HandleFunc("GET /admin/engines", g.admin(g.listEngines))
	mux.HandleFunc("POST /admin/engines", g.admin(g.addEngine))
	mux.HandleFunc("POST /admin/engines/{id}/drain", g.admin(g.drainEngine))
	mux.HandleFunc("DELETE /admin/engines/{id}", g.admin(g.removeEngine))
	mux.HandleFunc("GET /admin/metrics", g.admin(g.adminMetrics))
	mux.HandleFunc("/", g.fallback)
	return mux
}

var knownPaths = map[string]bool{
	protocol.PathChat: true, protocol.PathEmbeddings: true, protocol.PathRetrieve: true, protocol.PathModels: true,
	protocol.PathHealth: true, protocol.PathMetrics: true,
	protocol.PathAdminPolicy: true, protocol.PathAdminEngines: true, protocol.PathAdminMetrics: true,
}

// fallback answers unknown paths (404) and wrong methods (405) in OpenAI's shape.
func (g *Gateway) fallback(w http.ResponseWriter, r *http.Request) {
	if knownPaths[r.URL.Path] || strings.HasPrefix(r.URL.Path, protocol.PathAdminEngines+"/") {
		writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Code: "method_not_allowed",
			Message: r.Method + " is not allowed on " + r.URL.Path})
		return
	}
	writeError(w, notFound("unknown_path", "no route for %s %s", r.Method, r.URL.Path))
}

// call is one API request's bookkeeping for metrics.
type call struct {
	typ, model, priority, tenant string
	status                       int
	start                        time.Time
}

// answered sets the server's own timing of the answer on h (a header, or
// the declared trailer of a stream): first is when the first token left
// (0: the answer left whole, now), the end is now; both from receipt.
func (c *call) answered(h http.Header, first time.Duration) {
	end := time.Since(c.start)
	if first == 0 {
		first = end
	}
	h.Set(protocol.HeaderServerTiming, protocol.ServerTiming{FirstToken: first, End: end}.String())
}

// open reads the request's metadata headers (defType when it names no
// type) into c and decodes its JSON body into v. On failure it has
// answered w and reports false.
func (c *call) open(w http.ResponseWriter, r *http.Request, defType string, v any) (meta, bool) {
	md, aerr := parseMeta(r.Header, defType)
	if aerr == nil {
		c.tenant, c.priority, c.typ = md.Tenant, md.Priority.String(), md.Type
		aerr = decodeJSON(r.Body, v)
	}
	if aerr != nil {
		c.fail(w, aerr)
		return md, false
	}
	return md, true
}

func (c *call) fail(w http.ResponseWriter, e *apiError) {
	c.status = e.Status
	if e.Status == 499 { // nobody is listening
		return
	}
	writeError(w, e)
}

func (g *Gateway) api(typ string, h func(http.ResponseWriter, *http.Request, *call)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := &call{typ: typ, model: "unknown", priority: "normal", status: http.StatusOK, start: g.now()}
		r.Body = http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes)
		h(w, r, c)
		t := typeLabel(c.typ)
		g.met.requests.WithLabelValues(t, c.model, g.met.tenants.label(c.tenant), c.priority, statusClass(c.status)).Inc()
		g.met.duration.WithLabelValues(t, c.model).Observe(g.now().Sub(c.start).Seconds())
	}
}

// admin guards the admin API against cross-site use and, when one is
// set, requires the bearer token (see checkAdmin).
func (g *Gateway) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if aerr := g.checkAdmin(r); aerr != nil {
			if aerr.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", "Bearer")
			}
			writeError(w, aerr)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		h(w, r)
	}
}

func (g *Gateway) health(w http.ResponseWriter, _ *http.Request) {
	healthy := 0
	for _, s := range g.snapshot() {
		for _, e := range s.Engines {
			if e.State == stateActive.String() {
				healthy++
			}
		}
	}
	if healthy == 0 {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "healthy_engines": 0})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "healthy_engines": healthy})
}

type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	Kind    string `json:"kind"`
}

func (g *Gateway) listModels(w http.ResponseWriter, _ *http.Request) {
	ms := g.models()
	data := make([]modelEntry, 0, len(ms))
	for _, name := range sortedKeys(ms) {
		data = append(data, modelEntry{ID: name, Object: "model", Created: 0, OwnedBy: "sagebench", Kind: string(ms[name])})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// ids makes response ids: a random per-process prefix and a counter.
type ids struct {
	prefix string
	n      atomic.Uint64
}

func newIDs() *ids {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &ids{prefix: hex.EncodeToString(b[:])}
}

func (i *ids) next(kind string) string {
	return kind + "-" + i.prefix + strconv.FormatUint(i.n.Add(1), 36)
}
