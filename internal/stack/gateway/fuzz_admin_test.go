package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzIndex is a Retriever of dimension 2 over three documents.
type fuzzIndex struct{}

func (fuzzIndex) Dim() int      { return 2 }
func (fuzzIndex) Model() string { return "m-emb" }
func (fuzzIndex) Search(q []float32, k int) ([]Hit, error) {
	hits := []Hit{{ID: 1, Score: 1, Text: "a"}, {ID: 2, Score: 0.5, Text: "b"}, {ID: 3, Score: 0, Text: "c"}}
	return hits[:min(k, len(hits))], nil
}

// fuzzGateway is a gateway with an LLM, an embedder, an index and a
// factory of fake engines, serving in-process (no socket).
func fuzzGateway(f *testing.F) http.Handler {
	g, err := New(Config{Retriever: fuzzIndex{}, Factory: func(_ context.Context, s EngineSpec) (Member, error) {
		if s.Kind == "embedding" {
			return Member{Embedder: &fakeEmbedder{id: s.ID, model: "m-emb", slots: 1}}, nil
		}
		return Member{LLM: newFakeLLM(s.ID, 1)}, nil
	}})
	if err != nil {
		f.Fatal(err)
	}
	g.Add("llm", Member{LLM: newFakeLLM("llm", 4)})
	g.Add("emb", Member{Embedder: &fakeEmbedder{id: "emb", model: "m-emb", slots: 4}})
	f.Cleanup(func() { g.Close() })
	return g.Handler()
}

// serveFuzz sends one request in-process and checks the answer's shape:
// never a 5xx for a body (the engines are healthy), JSON when an error.
func serveFuzz(t *testing.T, h http.Handler, method, path string, body []byte) {
	req := httptest.NewRequest(method, path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code >= 500 && w.Code != http.StatusNotImplemented && w.Code != http.StatusServiceUnavailable {
		t.Fatalf("%s %s %q: status %d: %s", method, path, body, w.Code, w.Body.String())
	}
	if w.Code >= 400 && !strings.Contains(w.Body.String(), `"error"`) {
		t.Fatalf("%s %s: status %d without an error body: %s", method, path, w.Code, w.Body.String())
	}
}

// FuzzRetrieveBody feeds arbitrary bodies to POST /v1/retrieve.
func FuzzRetrieveBody(f *testing.F) {
	for _, s := range []string{`{"embedding":[0.1,0.2],"top_k":2}`, `{"input":"q"}`, `{"input":"q","embedding":[1,2]}`,
		`{"embedding":[1],"top_k":0}`, `{"top_k":1e99}`, `{"embedding":[1e999,1]}`, `{"input":""}`, `null`,
		`{"embedding":` + strings.Repeat("[", 10000) + `}`} {
		f.Add([]byte(s))
	}
	h := fuzzGateway(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		serveFuzz(t, h, http.MethodPost, "/v1/retrieve", body)
	})
}

// FuzzAdminBody feeds arbitrary bodies to POST /admin/policy and POST
// /admin/engines (then removes what was added, to keep the pool small).
func FuzzAdminBody(f *testing.F) {
	for _, s := range []string{`{"policy":"fifo"}`, `{"policy":"edf"}`, `{"policy":""}`, `{"policy":1}`,
		`{"id":"x1","kind":"llm","profile":"p"}`, `{"id":"../x","kind":"llm"}`, `{"id":"e","kind":"embedding","url":"http://127.0.0.1:1","model":"m"}`,
		`{"id":"` + strings.Repeat("a", 5000) + `","kind":"llm"}`, strings.Repeat("{", 10000)} {
		f.Add([]byte(s))
	}
	h := fuzzGateway(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		serveFuzz(t, h, http.MethodPost, "/admin/policy", body)
		serveFuzz(t, h, http.MethodPost, "/admin/engines", body)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/admin/engines", nil))
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
			t.Fatalf("GET /admin/engines: %v", err)
		}
		for _, e := range list.Data {
			if e.ID != "llm" && e.ID != "emb" {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodDelete, "/admin/engines/"+e.ID, nil))
			}
		}
	})
}
