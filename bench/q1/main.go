// Command q1 prints the runtime overhead of Q1 runs from their run.json
// files: bench/q1/run.sh runs it over the run directories it made.
//
//	go run ./bench/q1 DIR...
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/sagebench/sagebench/internal/record"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "q1:", err)
		os.Exit(1)
	}
}

func run(dirs []string) error {
	if len(dirs) == 0 {
		return errors.New("usage: go run ./bench/q1 RUN_DIR")
	}
	byPar := map[int][]float64{}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tparallelism\tE2E p50 ms\toverhead p50 ms\tshare %\tqueue ms\toperator ms\tsink ms\tgenerate queue p50 ms\tvalid\t")
	for _, d := range dirs {
		r, par, err := load(d)
		if err != nil {
			return err
		}
		x := metrics(r)
		byPar[par] = append(byPar[par], 100*x["runtime_overhead_share"])
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%v\t\n", r.RunID, par, r.Summary.E2E.P50,
			x["runtime_overhead_p50_ms"], 100*x["runtime_overhead_share"], x["runtime_overhead_queue_p50_ms"],
			x["runtime_overhead_operator_p50_ms"], x["runtime_overhead_sink_p50_ms"], x["stage_generate_queue_p50_ms"], r.Valid)
	}
	tw.Flush()
	pars := make([]int, 0, len(byPar))
	for p := range byPar {
		pars = append(pars, p)
	}
	slices.Sort(pars)
	for _, p := range pars {
		v := byPar[p]
		slices.Sort(v)
		fmt.Printf("parallelism %d: runtime overhead share of E2E p50: median %.3f %% over %d runs (min %.3f, max %.3f); target <= 1 %%\n",
			p, v[len(v)/2], len(v), v[0], v[len(v)-1])
	}
	return nil
}

func load(dir string) (record.Run, int, error) {
	var r record.Run
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return r, 0, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, 0, fmt.Errorf("%s: %w", dir, err)
	}
	var cfg struct {
		Parallelism int `json:"parallelism"`
	}
	if err := json.Unmarshal(r.RunConfig, &cfg); err != nil {
		return r, 0, fmt.Errorf("%s: run_config: %w", dir, err)
	}
	return r, cfg.Parallelism, nil
}

// metrics are the measured values of r's result by name.
func metrics(r record.Run) map[string]float64 {
	out := map[string]float64{}
	if r.Result != nil {
		for _, m := range r.Result.Metrics {
			if m.Measured() {
				out[m.Name] = m.Value
			}
		}
		for _, t := range r.Result.Tables {
			for _, row := range t.Rows {
				for _, c := range row {
					if c.Metric != nil && c.Metric.Measured() {
						out[c.Metric.Name] = c.Metric.Value
					}
				}
			}
		}
	}
	return out
}
