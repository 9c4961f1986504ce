package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// printPlans prints what a run would do: for each selected experiment its
// workload, scale, schedule per phase, target, output paths and effective
// config. A URL target is asked, read-only, whether it can switch policy
// and be resized, and the phases printed are those it will run. Experiments this build does not implement are listed as such;
// selecting one by name (-e) is then a usage error.
func (o *runOptions) printPlans(ctx context.Context, w io.Writer, specs []workload.Spec, resolved []runconfig.Resolved) error {
	byID := map[string]runconfig.Resolved{}
	for _, r := range resolved {
		byID[r.Spec.ID] = r
	}
	var missing []string
	var unrunnable error
	asked := map[string]*targetAbilities{} // per URL target: asked once
	for _, spec := range specs {
		fmt.Fprintf(w, "== %s %s (entry %s)\n   %s\n", spec.ID, spec.Name, spec.Entry, spec.Description)
		r, ok := byID[spec.ID]
		if !ok {
			fmt.Fprintf(w, "   not implemented in this build yet\n\n")
			missing = append(missing, spec.ID)
			continue
		}
		var a *targetAbilities
		if tc := r.Shared.Target; !tc.IsEmbedded() {
			if asked[tc.URL] == nil {
				got := askTarget(ctx, tc)
				asked[tc.URL] = &got
			}
			a = asked[tc.URL]
		}
		if err := printPlan(w, r, a); err != nil {
			return usageErrorf("%s: %v", spec.ID, err)
		}
		if err := r.Shared.Runnable(); err != nil && unrunnable == nil { // what the real run would refuse (exit 2)
			unrunnable = usageErrorf("%s: %v", spec.ID, err)
		}
		if tc := r.Shared.Target; tc.IsEmbedded() && tc.StackConfig != "" && unrunnable == nil {
			if _, err := stack.LoadConfig(tc.StackConfig); err != nil { // as preflight reads it
				unrunnable = usageErrorf("target.stack_config %s: %v", tc.StackConfig, err)
			}
		}
	}
	if len(asked) > 0 {
		fmt.Fprintln(w, "dry run: nothing was written or sent but the read-only preflight (GET /v1/models, /admin/policy, /admin/engines)")
	} else {
		fmt.Fprintln(w, "dry run: nothing was written or sent")
	}
	switch {
	case unrunnable != nil:
		return unrunnable
	case len(missing) > 0 && !o.all:
		return usageErrorf("%s not implemented in this build yet", strings.Join(missing, ", "))
	}
	return nil
}

// printPlan prints r's plan; a, when set, are its URL target's answers
// to the preflight, and the phases are those it will run.
func printPlan(w io.Writer, r runconfig.Resolved, a *targetAbilities) error {
	s := r.Shared
	scale := "full"
	if s.Quick {
		scale = "quick"
	}
	where := target.Describe(s.Target.URL) // without user info or query: they may hold credentials
	if s.Target.IsEmbedded() {
		where = "embedded reference stack (started on 127.0.0.1, free port)"
	}
	fmt.Fprintf(w, "   scale: %s   backend: %s   nodes: %d   parallelism: %d   repeat: %d   seed: %d (+rep)\n",
		scale, s.Backend, s.Nodes, s.Parallelism, s.Repeat, s.Seed)
	fmt.Fprintf(w, "   target: %s\n", where)
	if s.Tokenizer == tokenizer.ServerSpec {
		fmt.Fprintf(w, "   tokenizer: server: a setup phase calibrates against the target's POST /tokenize before the load (not on a dry run; the token lengths below are drawn as configured, a dataset's in %s)\n", tokenizer.DefaultName)
	}
	if a != nil {
		printPreflight(w, *a)
	}
	for rep := range s.Repeat {
		plan, err := r.Workload.Plan(s.Seed + int64(rep))
		if err != nil {
			return err
		}
		if rep > 0 {
			continue // the shape is the same; the first repetition is printed
		}
		if a != nil {
			plan = planForTarget(plan, *a)
		}
		for _, p := range plan.Phases {
			fmt.Fprintf(w, "   phase %-10s %s: %d requests at %.2f req/s over %s (%s)\n",
				p.Name, p.Process, p.Requests, p.Rate, p.Span.Round(1e6), p.Mix)
			for _, d := range p.Tokens {
				fmt.Fprintf(w, "      tokens %-12s input %s; output %s\n", d.Class+":", d.Input, d.Output)
			}
		}
		for _, n := range plan.Notes {
			fmt.Fprintf(w, "   note: %s\n", n)
		}
	}
	dir := filepath.Join(s.OutputDir, r.Spec.Section())
	files := append(slices.Clone(workload.RunFiles), r.Spec.Files...)
	fmt.Fprintf(w, "   records: %s/<run-id>/{%s} (metrics.jsonl when the target serves /metrics)\n", dir, strings.Join(files, ","))
	fmt.Fprintf(w, "            %s\n", filepath.Join(s.OutputDir, "unified_results.{jsonl,csv}"))
	if err := printJob(w, r); err != nil {
		return err
	}
	fmt.Fprintf(w, "   config_hash: %s\n   workload_hash: %s (the same for every backend)\n   effective config:\n", r.ConfigHash, r.WorkloadHash)
	for _, line := range strings.Split(strings.TrimRight(string(r.YAML), "\n"), "\n") {
		fmt.Fprintf(w, "     %s\n", line)
	}
	fmt.Fprintln(w)
	return nil
}

// jobDescriber is a workload that runs as a job elsewhere (Q1 on Ray).
type jobDescriber interface {
	DescribeJob(seed int64, parallelism int) (string, error)
}

// printJob prints the job a --backend ray run would submit.
func printJob(w io.Writer, r runconfig.Resolved) error {
	d, ok := r.Workload.(jobDescriber)
	if !ok {
		return nil
	}
	job, err := d.DescribeJob(r.Shared.Seed, r.Shared.Parallelism)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   ray job (submitted per repetition; submission_id from the run id):\n")
	for _, line := range strings.Split(job, "\n") {
		fmt.Fprintf(w, "     %s\n", line)
	}
	return nil
}
