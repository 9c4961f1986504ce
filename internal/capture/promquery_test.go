package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakePrometheus answers /api/v1/query_range with one counter series
// growing by 10 per step, present at every step except the ones in gaps.
func fakePrometheus(t *testing.T, gaps map[int]bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query_range" {
			http.NotFound(w, r)
			return
		}
		r.ParseForm()
		if strings.Contains(r.Form.Get("query"), "bad") {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"parse error"}`)
			return
		}
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		var values [][2]any
		for i := 0; start+float64(i)*step <= end+1e-9; i++ {
			if !gaps[i] {
				values = append(values, [2]any{start + float64(i)*step, strconv.Itoa(10 * i)})
			}
		}
		res := map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix",
			"result": []any{map[string]any{"metric": map[string]string{"__name__": "jobs_total", "job": "a"}, "values": values}}}}
		json.NewEncoder(w).Encode(res)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRunPrometheusQuery(t *testing.T) {
	url := fakePrometheus(t, map[int]bool{4: true, 5: true, 6: true}) // window 1 (steps 2-4) keeps 2 and 3; window 2 (4-6) has none
	end := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cfg := Config{Prometheus: url, Queries: []string{"jobs_total"}, Windows: 3, Window: 20 * time.Second,
		Interval: 10 * time.Second, End: end, Timeout: 10 * time.Second}
	c, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Metrics) != 1 || c.Metrics[0].Name != "jobs_total" || c.Metrics[0].Type != TypeCounter {
		t.Fatalf("metrics %+v: want the counter jobs_total", c.Metrics)
	}
	w := c.Metrics[0].Windows
	if w[0].Delta != 20 || *w[0].Rate != 1 || w[1].Delta != 10 || !w[2].Missing {
		t.Errorf("windows %+v: want delta 20 at 1/s, 10 (steps 2-3 only), then missing (steps 4-6 have no data)", w)
	}
	if !c.StartedAt.Equal(end.Add(-time.Minute)) {
		t.Errorf("started at %v, want one minute before the end", c.StartedAt)
	}
}

func TestRunPrometheusQueryErrors(t *testing.T) {
	url := fakePrometheus(t, nil)
	_, err := Run(context.Background(), Config{Prometheus: url, Queries: []string{"bad("}, Windows: 1, Window: 20 * time.Second, End: time.Unix(1e9, 0)})
	if qe := (*QueryError)(nil); !errors.As(err, &qe) || qe.Query != "bad(" {
		t.Errorf("a query the server refuses as bad data: %v, want a *QueryError", err)
	}
	for _, cfg := range []Config{
		{Prometheus: url},
		{Prometheus: url, Queries: []string{"up"}, Targets: []string{url}},
		{Prometheus: "localhost:9090", Queries: []string{"up"}},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("Validate(%+v) accepted", cfg)
		}
	}
}
