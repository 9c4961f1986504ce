package gobench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/gate"
)

// Result is what a comparison produced.
type Result struct {
	Outcome     *gate.Outcome
	BaseRef     string
	BaseCommit  string
	HeadCommit  string
	Dirty       bool
	ReportPath  string
	BasePath    string // raw go test output of the base
	CurrentPath string // raw go test output of the working tree
}

// side is one tree being measured: the base worktree or the working tree.
type side struct {
	name   string
	modDir string
	pkgs   map[string]*pkg // import path → package
	raw    bytes.Buffer
	failed []string // runs that exited non-zero
}

type pkg struct {
	dir string // package directory: binaries run there
	bin string // compiled test binary; "" when the package has no tests
}

// Run performs the comparison described by cfg. Errors of kind
// *InputError are the caller's to fix; others are tool failures. A result
// is returned whenever the gate ran, whatever its verdict.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r := &runner{cfg: cfg}
	return r.run(ctx)
}

type runner struct {
	cfg  Config
	top  string // git toplevel
	rel  string // module dir relative to top
	tmp  string
	base side
	cur  side
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Log, "gobench: "+format+"\n", args...)
}

func (r *runner) run(ctx context.Context) (res *Result, err error) {
	res = &Result{BaseRef: r.cfg.BaseRef}
	if err := r.locate(ctx, res); err != nil {
		return nil, err
	}
	if r.tmp, err = os.MkdirTemp("", "sagebench-gobench-"); err != nil {
		return nil, err
	}
	defer r.cleanup()
	wt := filepath.Join(r.tmp, "base")
	if _, err := r.git(ctx, r.top, "worktree", "add", "--detach", wt, res.BaseCommit); err != nil {
		return nil, err
	}
	r.base = side{name: "base", modDir: filepath.Join(wt, r.rel)}
	absDir, _ := filepath.Abs(r.cfg.Dir)
	r.cur = side{name: "current", modDir: absDir}
	for _, s := range []*side{&r.base, &r.cur} {
		if err := r.build(ctx, s); err != nil {
			return nil, err
		}
	}
	missing, err := r.checkSymbols(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.measure(ctx); err != nil {
		return nil, err
	}
	return r.finish(res, missing)
}

// locate checks the module, the ref and the worktree state.
func (r *runner) locate(ctx context.Context, res *Result) error {
	top, err := r.git(ctx, r.cfg.Dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return inputErrorf("%s is not inside a git repository: %v", r.cfg.Dir, err)
	}
	r.top = strings.TrimSpace(top)
	abs, err := filepath.Abs(r.cfg.Dir)
	if err != nil {
		return err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return inputErrorf("module directory: %v", err)
	}
	if r.rel, err = filepath.Rel(r.top, abs); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
		return inputErrorf("%s has no go.mod: run gobench in a Go module (or pass --dir)", abs)
	}
	sha, err := r.git(ctx, r.cfg.Dir, "rev-parse", "--verify", "--quiet", r.cfg.BaseRef+"^{commit}")
	if err != nil {
		return inputErrorf("base ref %q does not exist in %s", r.cfg.BaseRef, r.top)
	}
	res.BaseCommit = strings.TrimSpace(sha)
	if head, err := r.git(ctx, r.cfg.Dir, "rev-parse", "HEAD"); err == nil {
		res.HeadCommit = strings.TrimSpace(head)
	}
	status, err := r.git(ctx, r.cfg.Dir, "status", "--porcelain", "--ignored=matching", "--untracked-files=all")
	if err != nil {
		return err
	}
	changes := worktreeChanges(status)
	res.Dirty = len(changes) > 0
	if res.Dirty && !r.cfg.AllowDirty {
		return inputErrorf("the worktree has uncommitted changes (git-ignored Go files included: they are built into current only):\n%s\ncommit or stash them, or pass --allow-dirty to measure them as they are", strings.Join(changes, "\n"))
	}
	if !res.Dirty && res.BaseCommit == res.HeadCommit {
		return inputErrorf("base ref %q is HEAD (%s) and the worktree is clean: nothing to compare; pass the commit the change is based on (e.g. the PR's base)", r.cfg.BaseRef, res.BaseCommit)
	}
	return nil
}

// worktreeChanges picks from git status --porcelain --ignored output the
// entries that make the working tree differ from HEAD for a Go build:
// every tracked or untracked change, and ignored files Go would compile.
func worktreeChanges(status string) []string {
	var out []string
	for _, line := range strings.Split(status, "\n") {
		path, ignored := strings.CutPrefix(line, "!! ")
		switch {
		case strings.TrimSpace(line) == "":
		case !ignored:
			out = append(out, line)
		case goSource(path):
			out = append(out, line)
		}
	}
	return out
}

func goSource(path string) bool {
	base := filepath.Base(path)
	for _, ext := range []string{".go", ".s", ".c", ".h", ".syso"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return base == "go.mod" || base == "go.sum" || base == "go.work" || base == "go.work.sum"
}

// cleanup removes the base worktree and the temporary directory. It runs
// on a fresh context so that cancellation does not skip it.
func (r *runner) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wt := filepath.Join(r.tmp, "base")
	if _, err := os.Stat(wt); err == nil {
		if _, err := r.git(ctx, r.top, "worktree", "remove", "--force", wt); err != nil {
			r.logf("removing worktree %s: %v", wt, err)
		}
	}
	os.RemoveAll(r.tmp)
	r.git(ctx, r.top, "worktree", "prune")
}

func (r *runner) git(ctx context.Context, dir string, args ...string) (string, error) {
	return command(ctx, dir, r.cfg.Git, args...)
}

// command runs name in dir and returns its stdout; the error carries
// stderr.
func command(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return stdout.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// build lists the packages of one side and compiles their test binaries.
func (r *runner) build(ctx context.Context, s *side) error {
	out, err := command(ctx, s.modDir, r.cfg.Go, "list", "-f",
		"{{.ImportPath}}\t{{.Dir}}\t{{if or .TestGoFiles .XTestGoFiles}}tests{{end}}", r.cfg.Pkg)
	if err != nil {
		return fmt.Errorf("%s: listing packages: %w", s.name, err)
	}
	s.pkgs = map[string]*pkg{}
	binDir := filepath.Join(r.tmp, "bin-"+s.name)
	i := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[2] != "tests" {
			continue
		}
		p := &pkg{dir: f[1], bin: filepath.Join(binDir, fmt.Sprintf("%d.test", i))}
		i++
		r.logf("%s: building %s", s.name, f[0])
		if _, err := command(ctx, s.modDir, r.cfg.Go, "test", "-c", "-o", p.bin, f[0]); err != nil {
			return fmt.Errorf("%s: building tests of %s: %w", s.name, f[0], err)
		}
		s.pkgs[f[0]] = p
	}
	if len(s.pkgs) == 0 {
		return inputErrorf("%s: no package matching %q has tests", s.name, r.cfg.Pkg)
	}
	return nil
}

// sortedPkgs is the union of the packages of both sides.
func (r *runner) sortedPkgs() []string {
	seen := map[string]bool{}
	for _, s := range []*side{&r.base, &r.cur} {
		for ip := range s.pkgs {
			seen[ip] = true
		}
	}
	out := make([]string, 0, len(seen))
	for ip := range seen {
		out = append(out, ip)
	}
	sort.Strings(out)
	return out
}
