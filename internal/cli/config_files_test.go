package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var configHashLine = regexp.MustCompile(`config_hash: ([0-9a-f]{64})`)

// TestExperimentConfigs: every file in config/ validates (a dry run) and
// is the current default of its Q and scale (same config_hash), so the
// paper-scale files never drift from what `run -e QN` does.
func TestExperimentConfigs(t *testing.T) {
	files, _ := filepath.Glob("../../config/q*-*.yaml")
	if len(files) != 16 {
		t.Fatalf("config/ holds %d experiment files, want 16 (Q1..Q8 × full, quick)", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		q, scale, _ := strings.Cut(name, "-")
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", q, "-c", f, "--dry-run")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			args := []string{"run", "-e", q, "--dry-run"}
			if scale == "quick" {
				args = append(args, "--quick")
			}
			_, want, _ := runCLI(t, context.Background(), args...)
			got, def := configHashLine.FindStringSubmatch(stdout), configHashLine.FindStringSubmatch(want)
			if got == nil || def == nil || got[1] != def[1] {
				t.Errorf("%s is not the default %s configuration any more; regenerate it from `sagebench run -e %s --dry-run` (see config/README.md)", f, scale, q)
			}
		})
	}
}
