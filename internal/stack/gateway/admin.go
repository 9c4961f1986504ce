package gateway

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

func (g *Gateway) getPolicy(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"policy": g.Policy()})
}

func (g *Gateway) setPolicy(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Policy string `json:"policy"`
	}
	if aerr := decodeJSON(r.Body, &body); aerr != nil {
		writeError(w, aerr)
		return
	}
	if err := g.SetPolicy(body.Policy); err != nil {
		writeError(w, badRequest("invalid_value", "field policy: %v", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"policy": body.Policy})
}

// Engines lists every engine with its state and load.
func (g *Gateway) Engines() []EngineStatus {
	var out []EngineStatus
	for _, s := range g.snapshot() {
		out = append(out, s.Engines...)
	}
	return out
}

func (g *Gateway) listEngines(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": g.Engines()})
}

func (g *Gateway) adminMetrics(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"policy": g.Policy(), "pools": g.snapshot()})
}

var engineID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidEngineID reports whether id is a valid engine id: 1-64 letters,
// digits, '.', '_' or '-', starting with a letter or digit. The stack
// config and the admin API accept the same ids.
func ValidEngineID(id string) bool { return engineID.MatchString(id) }

// Validate reports the first invalid field of an add-engine request.
func (s EngineSpec) Validate() error {
	switch {
	case !ValidEngineID(s.ID):
		return errors.New("field id: want 1-64 letters, digits, '.', '_' or '-'")
	case s.Kind != string(engine.KindLLM) && s.Kind != string(engine.KindEmbedding):
		return errors.New("field kind: want llm or embedding")
	case (s.Profile == "") == (s.URL == ""):
		return errors.New("fields profile and url: set exactly one")
	case s.URL != "" && s.Model == "":
		return errors.New("field model: required with url")
	case s.Slots < 0:
		return errors.New("field slots: must be ≥ 0")
	}
	return nil
}

func (g *Gateway) addEngine(w http.ResponseWriter, r *http.Request) {
	var spec EngineSpec
	if aerr := decodeJSON(r.Body, &spec); aerr != nil {
		writeError(w, aerr)
		return
	}
	if err := spec.Validate(); err != nil {
		writeError(w, badRequest("invalid_value", "%v", err))
		return
	}
	if _, err := g.member(spec.ID); err == nil {
		writeError(w, &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Code: "engine_exists", Message: "field id: engine " + spec.ID + " already exists"})
		return
	}
	if g.cfg.Factory == nil {
		writeError(w, &apiError{Status: http.StatusNotImplemented, Type: "server_error", Code: "no_factory", Message: "this gateway cannot build engines"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	e, err := g.cfg.Factory(ctx, spec)
	if err != nil {
		writeError(w, badRequest("invalid_value", "engine %s: %v", spec.ID, err))
		return
	}
	if err := g.Add(spec.ID, e); err != nil {
		if e.Close != nil {
			_ = e.Close()
		}
		writeError(w, &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Code: "engine_exists", Message: err.Error()})
		return
	}
	m, err := g.member(spec.ID)
	if err != nil { // removed by a concurrent DELETE since Add
		writeError(w, &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Code: "engine_removed", Message: "engine " + spec.ID + " was added and removed again meanwhile"})
		return
	}
	p := g.pools[m.kind]
	p.mu.Lock()
	st := m.status()
	p.mu.Unlock()
	writeJSON(w, http.StatusCreated, st)
}

func (g *Gateway) drainEngine(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Minute)
	defer cancel()
	if err := g.Drain(ctx, id); err != nil {
		writeError(w, engineErr(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "state": stateDrained.String()})
}

func (g *Gateway) removeEngine(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := g.Remove(id); err != nil {
		writeError(w, engineErr(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "state": stateRemoved.String()})
}

func engineErr(err error) *apiError {
	if errors.Is(err, ErrUnknownEngine) {
		return notFound("engine_not_found", "%v", err)
	}
	return &apiError{Status: http.StatusGatewayTimeout, Type: "timeout", Code: "drain_timeout", Message: err.Error()}
}
