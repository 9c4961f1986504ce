package gobench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/gate"
	"github.com/sagebench/sagebench/internal/record"
)

// checkSymbols lists the expected benchmarks in every binary of both
// sides and returns, per side, the symbols missing there.
func (r *runner) checkSymbols(ctx context.Context) (map[string][]string, error) {
	missing := map[string][]string{}
	if len(r.cfg.Expect) == 0 {
		return missing, nil
	}
	funcs := make([]string, len(r.cfg.Expect))
	for i, e := range r.cfg.Expect {
		funcs[i] = expectFunc(e)
	}
	re := "^(" + strings.Join(funcs, "|") + ")$"
	for _, s := range []*side{&r.base, &r.cur} {
		found := map[string]bool{}
		for _, p := range s.pkgs {
			out, err := command(ctx, p.dir, p.bin, "-test.list", re)
			if err != nil {
				return nil, fmt.Errorf("%s: listing benchmarks: %w", s.name, err)
			}
			for _, name := range strings.Fields(out) {
				found[name] = true
			}
		}
		for _, sym := range r.cfg.Expect {
			if !found[expectFunc(sym)] {
				missing[s.name] = append(missing[s.name], sym)
			}
		}
	}
	return missing, nil
}

// expectFunc is the benchmark function an expect entry names: the part
// before the first '/' of "BenchmarkAggregateParallel/" or of a full name,
// without a -GOMAXPROCS suffix.
func expectFunc(e string) string {
	fn, _, _ := strings.Cut(e, "/")
	if i := strings.LastIndexByte(fn, '-'); i > 0 && i < len(fn)-1 && strings.Trim(fn[i+1:], "0123456789") == "" {
		fn = fn[:i]
	}
	return fn
}

// measure runs the binaries interleaved: for each round and package, the
// base binary, then the current one.
func (r *runner) measure(ctx context.Context) error {
	pkgs := r.sortedPkgs()
	for round := 1; round <= r.cfg.Count; round++ {
		r.logf("round %d/%d", round, r.cfg.Count)
		for _, ip := range pkgs {
			for _, s := range []*side{&r.base, &r.cur} {
				p, ok := s.pkgs[ip]
				if !ok {
					continue
				}
				if err := r.runOnce(ctx, s, ip, p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (r *runner) runOnce(ctx context.Context, s *side, ip string, p *pkg) error {
	args := []string{"-test.run", "^$", "-test.bench", r.cfg.Bench, "-test.benchtime", r.cfg.Benchtime,
		"-test.count", "1", "-test.benchmem"}
	if r.cfg.CPU != "" {
		args = append(args, "-test.cpu", r.cfg.CPU)
	}
	cmd := exec.CommandContext(ctx, p.bin, args...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = &s.raw, &s.raw
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.failed = append(s.failed, fmt.Sprintf("%s: benchmark binary exited: %v", ip, err))
	}
	return nil
}

// finish writes the raw outputs, gates them and writes the report.
func (r *runner) finish(res *Result, missing map[string][]string) (*Result, error) {
	stem := strings.TrimSuffix(r.cfg.Report, filepath.Ext(r.cfg.Report))
	res.ReportPath = r.cfg.Report
	res.BasePath, res.CurrentPath = stem+".base.txt", stem+".current.txt"
	if dir := filepath.Dir(r.cfg.Report); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	sets := map[string]*benchset.Set{}
	for _, sp := range []struct {
		s    *side
		path string
	}{{&r.base, res.BasePath}, {&r.cur, res.CurrentPath}} {
		if err := record.WriteFileAtomic(sp.path, sp.s.raw.Bytes()); err != nil {
			return nil, err
		}
		set, err := benchset.ReadBench(bytes.NewReader(sp.s.raw.Bytes()), sp.path, sp.s.name)
		if err != nil {
			return nil, err
		}
		for _, f := range sp.s.failed {
			set.Problems = append(set.Problems, benchset.Problem{File: sp.path, Msg: f})
		}
		sets[sp.s.name] = set
	}
	p := r.cfg.Policy
	p.Expect = append(append([]string(nil), p.Expect...), r.cfg.Expect...)
	out, err := gate.Evaluate(sets["base"], sets["current"], p)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"base", "current"} {
		for _, sym := range missing[name] {
			out.Findings = append(out.Findings, gate.Finding{Verdict: gate.Inconclusive, Rule: "expect",
				Subject: sym, Detail: fmt.Sprintf("not in the %s test binaries (-test.list)", name)})
			out.Verdict = max(out.Verdict, gate.Inconclusive)
		}
	}
	res.Outcome = out
	return res, r.writeReport(res)
}
