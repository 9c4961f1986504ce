package target

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/target/targettest"
)

// TestOpenChecksModels: a model the workload asks for that the target does
// not list is a typed configuration error naming what the target has,
// found by Open before any traffic.
func TestOpenChecksModels(t *testing.T) {
	tests := []struct {
		name    string
		listed  []string // nil: the fake's defaults
		want    []string
		missing []string // nil: Open succeeds
	}{
		{"listed", nil, []string{"fake-llm", "fake-embed"}, nil},
		{"no models asked for: no check", []string{}, nil, nil},
		{"one unknown", []string{"a", "b"}, []string{"a", "Qwen/QwQ-32B"}, []string{"Qwen/QwQ-32B"}},
		{"the target lists none", []string{}, []string{"m"}, []string{"m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := targettest.NewServer(targettest.OK)
			defer srv.Close()
			srv.Models = tc.listed
			tg, err := Open(context.Background(), Config{URL: srv.URL}, Options{Models: tc.want})
			if tc.missing == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				tg.Close(context.Background())
				return
			}
			var ume *UnknownModelError
			if !errors.As(err, &ume) {
				t.Fatalf("Open: %v, want an *UnknownModelError", err)
			}
			if !slices.Equal(ume.Missing, tc.missing) || !slices.Equal(ume.Have, tc.listed) {
				t.Errorf("missing %q have %q; want %q, %q", ume.Missing, ume.Have, tc.missing, tc.listed)
			}
			for _, s := range append(tc.missing, tc.listed...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
		})
	}
}

// TestOpenModelsNotListed: a target that has no model list (only
// /health) cannot be checked; Open goes on.
func TestOpenModelsNotListed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			io.WriteString(w, "ok")
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	tg, err := Open(context.Background(), Config{URL: srv.URL}, Options{Models: []string{"m"}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	tg.Close(context.Background())
}
