package target

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// TestEnginesAdminOnTheReferenceStack adds, drains and removes an engine
// of the embedded stack through its admin API, as Q4 and Q7 do.
func TestEnginesAdminOnTheReferenceStack(t *testing.T) {
	ctx := context.Background()
	tg, err := Open(ctx, Config{URL: Embedded}, Options{Start: EmbeddedStack(nil), Seed: 1,
		StackYAML: []byte("engines:\n  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}\nindex: {size: 0}\n")})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(ctx)
	added, err := tg.AddEngine(ctx, EngineSpec{ID: "llm-1", Kind: "llm", Profile: "llama3.1-8b-a10g"})
	if err != nil || added.ID != "llm-1" || added.State != "active" {
		t.Fatalf("AddEngine = %+v, %v", added, err)
	}
	ids := func() []string {
		es, err := tg.Engines(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.ID+"="+e.State)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"llm-0=active", "llm-1=active"}) {
		t.Errorf("engines %v", got)
	}
	if err := tg.DrainEngine(ctx, "llm-1"); err != nil {
		t.Fatal(err)
	}
	if err := tg.RemoveEngine(ctx, "llm-1"); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []string{"llm-0=active"}) {
		t.Errorf("after remove: engines %v", got)
	}
	if err := tg.RemoveEngine(ctx, "ghost"); err == nil || errors.Is(err, ErrEnginesUnsupported) {
		t.Errorf("removing an unknown engine: %v, want the target's 404 message", err)
	}
}

func TestEnginesAdminUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
	}{{"no admin api", http.StatusNotFound}, {"refused", http.StatusForbidden}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/models" {
					w.WriteHeader(tc.status)
				}
			}))
			defer srv.Close()
			tg, err := Open(context.Background(), Config{URL: srv.URL}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tg.Engines(context.Background()); !errors.Is(err, ErrEnginesUnsupported) {
				t.Errorf("Engines: %v, want ErrEnginesUnsupported", err)
			}
		})
	}
}
