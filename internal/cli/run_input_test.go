package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// closedURL returns a loopback URL nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeConfig(t, dir, tinyQ2)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	unknownKey := write("unknown.yaml", "q2:\n  schedule:\n    rat: 3\n")
	malformed := write("malformed.yaml", "q2: [1,\n")
	unsetVar := write("unset.yaml", "seed: ${SAGEBENCH_TEST_UNSET_VAR}\n")
	twicePolicy := write("twice.yaml", "q2:\n  policies: [fifo, priority, fifo]\n")
	hugePrompt := write("huge.yaml", "q2:\n  llm: {prompt_words: 100000000}\n")
	badPolicy := write("policy.yaml", "q2:\n  policies: [fifo, lottery]\n")
	fileNotDir := write("file", "x")
	badRate := write("rate.yaml", "q2:\n  schedule: {rate: -5}\n")
	badStack := write("stack.yaml", "target:\n  stack_config: "+filepath.Join(dir, "no-such-stack.yaml")+"\n")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no experiment", []string{"run"}, ExitUsage, "no experiment"},
		{"unknown experiment", []string{"run", "-e", "Q9"}, ExitUsage, `unknown experiment "Q9"`},
		{"conflicting -e and --all", []string{"run", "-e", "Q2", "--all"}, ExitUsage, "conflict"},
		{"repeat 0", []string{"run", "-e", "Q2", "--repeat", "0"}, ExitUsage, "repeat 0: must be in [1, 10000]"},
		{"repeat a billion, dry run", []string{"run", "-e", "Q2", "--dry-run", "--repeat", "1000000000"}, ExitUsage, "repeat 1000000000"},
		{"seed overflows with repeat", []string{"run", "-e", "Q2", "--seed", "9223372036854775807", "--repeat", "2"}, ExitUsage, "seed 9223372036854775807: must be in [0, 9223372036854775806] with --repeat 2"},
		{"endless config file", []string{"run", "-e", "Q2", "-c", "/dev/zero"}, ExitUsage, "/dev/zero"},
		{"a policy twice", []string{"run", "-e", "Q2", "-c", twicePolicy}, ExitUsage, `"fifo" is listed twice`},
		{"prompt words typo", []string{"run", "-e", "Q2", "-c", hugePrompt}, ExitUsage, "q2.llm.prompt_words 100000000"},
		{"unknown pacer", []string{"run", "-e", "Q2", "--pacer", "exact"}, ExitUsage, `pacer "exact": choose efficient (default) or precise`},
		{"parallelism 0", []string{"run", "-e", "Q2", "--parallelism", "0"}, ExitUsage, "parallelism 0"},
		{"nodes 0", []string{"run", "-e", "Q2", "--nodes", "0"}, ExitUsage, "nodes 0"},
		{"nodes 2 for a one-node Q", []string{"run", "-e", "Q2", "--nodes", "2"}, ExitUsage, "Q2 runs on one node"},
		{"nats url with credentials", []string{"run", "-e", "Q1", "--nats-url", "nats://u:p@127.0.0.1:4222"}, ExitUsage, "nats_url carries credentials"},
		{"negative seed", []string{"run", "-e", "Q2", "--seed", "-1"}, ExitUsage, "seed -1"},
		{"seed not a number", []string{"run", "-e", "Q2", "--seed", "abc"}, ExitUsage, `--seed "abc": want a whole number`},
		{"duration without a unit", []string{"run", "-e", "Q2", "--duration", "5"}, ExitUsage, `--duration "5": want a duration with its unit`},
		{"repeat not a number", []string{"run", "-e", "Q2", "--repeat", "2.5"}, ExitUsage, `--repeat "2.5": want a whole number`},
		{"ray", []string{"run", "-e", "Q2", "-b", "ray"}, ExitUsage, "Q2 does not run on Ray"},
		{"unknown backend", []string{"run", "-e", "Q2", "-b", "spark"}, ExitUsage, `backend "spark"`},
		{"bad rate", []string{"run", "-e", "Q2", "--rate", "-5"}, ExitUsage, "--rate -5: want a finite number"},
		{"NaN rate", []string{"run", "-e", "Q4", "--rate", "NaN"}, ExitUsage, "--rate NaN"},
		{"bad llm ratio", []string{"run", "-e", "Q2", "--llm-ratio", "2"}, ExitUsage, "--llm-ratio 2: want a fraction"},
		{"negative total", []string{"run", "-e", "Q3", "--total-requests", "-1"}, ExitUsage, "--total-requests -1"},
		{"nats url of another scheme", []string{"run", "-e", "Q4", "--nats-url", "http://127.0.0.1:4222"}, ExitUsage, `nats_url "http://127.0.0.1:4222": want nats://host:port`},
		{"rate in a config file names its key", []string{"run", "-e", "Q2", "-c", badRate}, ExitUsage, "q2.schedule.rate"},
		{"bad target", []string{"run", "-e", "Q2", "--target", "ftp://x"}, ExitUsage, `target "ftp://x"`},
		{"missing config", []string{"run", "-e", "Q2", "-c", filepath.Join(dir, "nope.yaml")}, ExitUsage, "nope.yaml"},
		{"malformed config", []string{"run", "-e", "Q2", "-c", malformed}, ExitUsage, "malformed.yaml"},
		{"unknown key", []string{"run", "-e", "Q2", "-c", unknownKey}, ExitUsage, "q2.schedule.rat"},
		{"unset variable", []string{"run", "-e", "Q2", "-c", unsetVar}, ExitUsage, "SAGEBENCH_TEST_UNSET_VAR is not set"},
		{"unknown policy", []string{"run", "-e", "Q2", "-c", badPolicy}, ExitUsage, `unknown policy "lottery"`},
		{"unwritable output dir", []string{"run", "-e", "Q2", "-c", good, "--output-dir", filepath.Join(fileNotDir, "sub")}, ExitUsage, "output dir"},
		{"unreachable target", []string{"run", "-e", "Q2", "-c", good, "--output-dir", filepath.Join(dir, "out"), "--target", closedURL(t)}, ExitError, "is unreachable"},
		{"missing stack config", []string{"run", "-e", "Q2", "-c", badStack, "--output-dir", filepath.Join(dir, "out")}, ExitUsage, "no-such-stack.yaml"},
		{"schedule beyond its limits", []string{"run", "-e", "Q2", "--rate", "1e-12", "--total-requests", "3", "--output-dir", filepath.Join(dir, "out"), "--target", closedURL(t)}, ExitUsage, "720h0m0s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, context.Background(), c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)\nstdout: %s", code, c.code, stderr, c.want, stdout)
			}
			if strings.Contains(stderr, "strconv") || strings.Contains(stderr, "time: ") {
				t.Errorf("the parser's internals leak: %q", stderr)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
				t.Errorf("error is %d lines, want one: %q", n+1, stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "q2")); err == nil {
		t.Error("a run directory was created for an unreachable target")
	}
}

func TestRunDryRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "never")
	cfg := writeConfig(t, dir, "seed: 9\nq2:\n  schedule: {rate: 30}\n  llm_ratio: 0.4\n")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "Q2", "--quick", "--dry-run",
		"-c", cfg, "--rate", "25", "--output-dir", out, "--target", closedURL(t))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("dry run created %s", out)
	}
	for _, want := range []string{
		"scale: quick", "seed: 9", "phase fifo", "poisson: 150 requests at", // flag beats YAML, YAML beats defaults
		"llm_ratio: 0.4", "rate: 25", "config_hash:", "nothing was written or sent",
		filepath.Join(out, "q2") + "/<run-id>/",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
}

func TestRunDryRunAllListsCatalog(t *testing.T) {
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--all", "--dry-run", "--quick")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Q1 PipelineChain (entry e2e_pipeline)", "Q2 ControlMix", "Q3 NoisyNeighbor", "Q4 ScaleFrontier",
		"Q5 HeteroResilience", "Q6 BurstTown", "Q7 ReconfigDrill", "Q8 RecoverySoak (entry recovery)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--all --dry-run lacks %q", want)
		}
	}
	if strings.Contains(stdout, "not implemented") {
		t.Errorf("every Q of the catalog is built, yet the plan says one is not:\n%s", stdout)
	}
	// every file a run writes: the drills' events and windows too
	for q, files := range map[string]string{"q2": "{run.json,requests.jsonl,summary.md,bench.txt,metrics.jsonl,queue.json}",
		"q5": "{run.json,requests.jsonl,summary.md,bench.txt,metrics.jsonl,events.jsonl,windows.jsonl,drill.json}"} {
		if !strings.Contains(stdout, filepath.Join("results", q)+"/<run-id>/"+files) {
			t.Errorf("the records line of %s lacks %s:\n%s", q, files, stdout)
		}
	}
}

// TestRunDryRunHidesURLSecrets: credentials written into --target (user
// info, a key in the query) never reach the printed plan.
func TestRunDryRunHidesURLSecrets(t *testing.T) {
	for u, want := range map[string]int{"http://bob:s3cr3t@127.0.0.1:1": ExitOK, "http://127.0.0.1:1/v1?api_key=s3cr3t": ExitUsage} {
		code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "Q2", "--quick", "--dry-run", "--target", u)
		if code != want {
			t.Fatalf("--target %s: exit %d, want %d: %s", u, code, want, stderr)
		}
		if strings.Contains(stdout+stderr, "s3cr3t") {
			t.Errorf("--target %s: the plan shows the secret:\n%s", u, stdout)
		}
	}
}

// TestRunPositionalExperimentHints: `sagebench run Q2` is a common slip;
// it exits 2 with the command to type instead.
func TestRunPositionalExperimentHints(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"an experiment", []string{"run", "Q2"}, "sagebench run -e Q2"},
		{"two experiments", []string{"run", "q1", "q2"}, "sagebench run -e q1,q2"},
		{"anything else", []string{"run", "fast"}, `unexpected argument "fast"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := Main(context.Background(), tc.args, &out, &errb)
			if code != ExitUsage || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), ExitUsage, tc.want)
			}
		})
	}
}

// TestRunIgnoredFlags: a workload flag an experiment does not use is
// named on stderr as ignored, and the dry run still succeeds.
func TestRunIgnoredFlags(t *testing.T) {
	cases := []struct {
		q     string
		flags []string
		want  []string
	}{
		{"Q1", []string{"--llm-ratio", "0.3"}, []string{"--llm-ratio does not apply to Q1"}},
		{"Q3", []string{"--total-requests", "5", "--llm-ratio", "0.3"}, []string{"--total-requests does not apply to Q3", "--llm-ratio does not apply to Q3"}},
		{"Q4", []string{"--total-requests", "5"}, []string{"--total-requests does not apply to Q4"}},
		{"Q6", []string{"--llm-ratio", "0.3"}, []string{"--llm-ratio does not apply to Q6"}},
	}
	for _, c := range cases {
		t.Run(c.q, func(t *testing.T) {
			args := append([]string{"run", "-e", c.q, "--quick", "--dry-run"}, c.flags...)
			code, _, stderr := runCLI(t, context.Background(), args...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}
