package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/target/targettest"
)

// phases are the phase names a plan prints.
func phases(stdout string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^   phase (\S+)`).FindAllStringSubmatch(stdout, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDryRunAsksURLTarget: against a URL target the dry run asks it,
// read-only, whether it switches policy and can be resized, and prints
// the phases it will run: one "target" phase (Q4: one scale, n = 1) for
// a target that cannot; every phase for one that can; every phase,
// marked conditional, for one that does not answer. No chat or
// embedding request is sent.
func TestDryRunAsksURLTarget(t *testing.T) {
	noAdmin := targettest.NewSlots(t, targettest.SlotsConfig{NoAdmin: true})
	admin := targettest.NewSlots(t, targettest.SlotsConfig{})
	for _, tc := range []struct {
		name, q, url string
		want         []string
		says         string
	}{
		{"Q2, no admin API", "Q2", noAdmin.URL, []string{"target"}, "it cannot switch policy"},
		{"Q3, no admin API", "Q3", noAdmin.URL, []string{"target.alone", "target.contended"}, "runs once, with its own policy"},
		{"Q6, admin API", "Q6", admin.URL, []string{"fifo", "priority", "slo_aware"}, "it switches policy (GET /admin/policy: fifo)"},
		{"Q4, no engines API", "Q4", noAdmin.URL, []string{"engines=1"}, "measured once at its current size, as n = 1"},
		{"Q4, engines API", "Q4", admin.URL, []string{"engines=1", "engines=2", "engines=4"}, "it lists its engines"},
		{"Q2, not answering", "Q2", closedURL(t), []string{"fifo", "priority", "slo_aware", "fair_share"}, "if the target can switch policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", tc.q, "--quick", "--dry-run", "--target", tc.url)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := phases(stdout); strings.Join(got, " ") != strings.Join(tc.want, " ") || !strings.Contains(stdout, tc.says) {
				t.Errorf("phases %v, want %v and %q:\n%s", got, tc.want, tc.says, stdout)
			}
		})
	}
	if n := noAdmin.Chats() + admin.Chats(); n != 0 {
		t.Errorf("a dry run sent %d chats", n)
	}
}

// TestStackOnlyKeysWarned: every stack-only key a config sets is named
// in a warning when the target is a URL, and none when it is embedded.
func TestStackOnlyKeysWarned(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "q3:\n  aggressor: {max_concurrent: 5}\n  stack: {llm_engines: 3, llm_slots: 2, profile: llama3.1-8b-h100}\nq2:\n  stack: {llm_engines: 1, llm_slots: 2, profile: llama3.1-8b-h100}\n")
	code, _, stderr := runCLI(t, context.Background(), "run", "-e", "Q2,Q3", "--quick", "--dry-run", "-c", cfg, "--target", closedURL(t))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, key := range []string{"Q2: q2.stack", "Q3: q3.stack", "Q3: q3.aggressor.max_concurrent"} {
		if !strings.Contains(stderr, "warning: "+key+" configures the embedded reference stack only") {
			t.Errorf("no warning for %s:\n%s", key, stderr)
		}
	}
	if _, _, stderr := runCLI(t, context.Background(), "run", "-e", "Q2,Q3", "--quick", "--dry-run", "-c", cfg); strings.Contains(stderr, "warning") {
		t.Errorf("embedded target warned: %s", stderr)
	}
}
