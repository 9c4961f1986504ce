package gobench

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/gate"
)

// Config is one gobench comparison. Zero fields take the defaults named.
type Config struct {
	Dir        string      // module directory; "." by default
	BaseRef    string      // git ref to compare against (required)
	Pkg        string      // package pattern; "./..." by default
	Bench      string      // -test.bench regexp; "." by default
	Count      int         // interleaved rounds; 10 by default
	Benchtime  string      // -test.benchtime; "300ms" by default
	CPU        string      // -test.cpu list; "2" by default (the contract's)
	Expect     []string    // benchmarks that must exist on both sides: functions, full names or prefixes ending in /
	Report     string      // Markdown report path; "gobench-report.md" by default
	AllowDirty bool        // compare a worktree with uncommitted changes
	Policy     gate.Policy // the zero Policy means gate.Default()
	Go         string      // go command; "go" by default
	Git        string      // git command; "git" by default
	Log        io.Writer   // progress lines; io.Discard by default
	Now        func() time.Time
}

// InputError is a problem with the request itself (a missing ref, a dirty
// worktree, a bad flag) rather than with running it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

func (c Config) withDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.Dir, ".")
	def(&c.Pkg, "./...")
	def(&c.Bench, ".")
	def(&c.Benchtime, "300ms")
	def(&c.CPU, "2")
	def(&c.Report, "gobench-report.md")
	def(&c.Go, "go")
	def(&c.Git, "git")
	if c.Count == 0 {
		c.Count = 10
	}
	if reflect.ValueOf(c.Policy).IsZero() {
		// Only an entirely unset policy means the default: a partial one
		// (limits without alpha) must fail validation, not lose its limits.
		c.Policy = gate.Default()
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports the first unusable field.
func (c Config) Validate() error {
	var errs []error
	if c.Count < 0 {
		errs = append(errs, fmt.Errorf("count %d must be >= 1 (0 takes the default, 10)", c.Count))
	}
	c = c.withDefaults()
	switch {
	case c.BaseRef == "":
		errs = append(errs, errors.New("base ref is required (--base-ref)"))
	case strings.HasPrefix(c.BaseRef, "-"):
		errs = append(errs, fmt.Errorf("base ref %q must not start with '-' (git would read it as an option)", c.BaseRef))
	}
	if c.Count < 1 {
		errs = append(errs, fmt.Errorf("count %d must be >= 1", c.Count))
	}
	if _, err := regexp.Compile(c.Bench); err != nil {
		errs = append(errs, fmt.Errorf("bench %q: %v", c.Bench, err))
	}
	if d, err := time.ParseDuration(c.Benchtime); (err != nil || d <= 0) && !regexp.MustCompile(`^[1-9][0-9]*x$`).MatchString(c.Benchtime) {
		errs = append(errs, fmt.Errorf("benchtime %q: want a positive duration (300ms) or a count (100x)", c.Benchtime))
	}
	if !regexp.MustCompile(`^[0-9]+(,[0-9]+)*$`).MatchString(c.CPU) {
		errs = append(errs, fmt.Errorf("cpu %q: want a comma-separated list of numbers", c.CPU))
	}
	for _, s := range c.Expect {
		if !regexp.MustCompile(`^Benchmark[A-Za-z0-9_]*$`).MatchString(expectFunc(s)) {
			errs = append(errs, fmt.Errorf("expect %q: want a benchmark function (BenchmarkX), a full name (BenchmarkX/sub-2) or a prefix (BenchmarkX/)", s))
		}
	}
	if err := c.Policy.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return &InputError{Err: err}
	}
	return nil
}
