package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/redact/redacttest"
	"github.com/sagebench/sagebench/internal/target/targettest"
)

// leakQ2 runs Q2 on two policies against a Leaker with an API key and an
// admin token, verbose, so that every channel (requests, notes, metrics,
// the terminal) has something from the target to keep.
const leakQ2 = `
target:
  api_key_env: LEAK_TEST_KEY
  admin_token_env: LEAK_TEST_ADMIN
validity:
  max_lag_p99_ms: 5000
  min_delivered_ratio: 0.1
q2:
  schedule: {process: constant, rate: 100, count: 9}
  rounds: 1
  policies: [fifo, priority]
`

// setSecrets puts the key and the admin token in the environment for
// the rest of the test (not with t.Setenv: fuzz targets call it).
func setSecrets(t testing.TB, key, admin string) {
	t.Helper()
	for name, v := range map[string]string{"LEAK_TEST_KEY": key, "LEAK_TEST_ADMIN": admin} {
		old, had := os.LookupEnv(name)
		os.Setenv(name, v)
		t.Cleanup(func() {
			if had {
				os.Setenv(name, old)
			} else {
				os.Unsetenv(name)
			}
		})
	}
}

// runLeaker runs leakQ2 against l and returns the output directory, the
// exit code and what the command printed.
func runLeaker(t testing.TB, l *targettest.Leaker) (out string, code int, stdout, stderr string) {
	t.Helper()
	return runLeakerWith(t, l, leakQ2)
}

// runLeakerWith is runLeaker with another config.
func runLeakerWith(t testing.TB, l *targettest.Leaker, config string) (out string, code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	out = filepath.Join(dir, "results")
	cfg := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var so, se strings.Builder
	code = Main(context.Background(), []string{"run", "-e", "q2", "-c", cfg, "-v", "--target", l.URL, "--output-dir", out}, &so, &se)
	return out, code, so.String(), se.String()
}

// leakedIn returns where under root, or in the named outputs, a secret
// can still be read in any encoding.
func leakedIn(t testing.TB, root string, outputs map[string]string, secrets ...string) []string {
	t.Helper()
	var where []string
	check := func(name, text string) {
		for _, s := range secrets {
			if redacttest.Leaks(text, s) {
				where = append(where, fmt.Sprintf("%s holds %q", name, s))
			}
		}
	}
	for name, text := range outputs {
		check(name, text)
	}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			check(path, string(b))
		}
		return nil
	})
	return where
}

// TestNoSecretReachesTheRunDirectory is attacks 1 and 2 of issue 28: a
// target hands the API key and the admin token back, in each encoding,
// in its engine header, error bodies and events, a refused policy switch
// and its /metrics labels; nothing under the output directory, on stdout
// or on stderr may hold either, in any encoding.
func TestNoSecretReachesTheRunDirectory(t *testing.T) {
	const key, admin = "sk-live-K3y0123456789abcdef", "adm-T0ken-987654zyxw"
	setSecrets(t, key, admin)
	for i, name := range []string{"raw", "base64 std", "base64 url", "json \\u all", "percent all", "json of base64"} {
		for _, wrap := range []string{"%s", "Authorization: %s"}[i%2:][:1] {
			t.Run(name+"/"+strings.Fields(wrap)[0], func(t *testing.T) {
				t.Parallel()
				l := targettest.NewLeaker()
				defer l.Close()
				enc := redacttest.Encodings[name]
				l.Encode = func(auth string) string { return enc(fmt.Sprintf(wrap, auth)) }
				out, code, stdout, stderr := runLeaker(t, l)
				if code != ExitOK && code != ExitInvalidRun {
					t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
				}
				if leaks := leakedIn(t, out, map[string]string{"stdout": stdout, "stderr": stderr}, key, admin); len(leaks) > 0 {
					t.Errorf("secrets leaked:\n%s", strings.Join(leaks, "\n"))
				}
				if !strings.Contains(stdout+stderr, "[REDACTED]") {
					t.Errorf("nothing was redacted: did the target leak at all?\nstdout:\n%s", stdout)
				}
			})
		}
	}
}

// FuzzSecretsInRunDirectory embeds a fuzzed key and admin token, in a
// fuzzed encoding and wrapper, in everything a target answers during a
// run, and checks that neither appears in the run directory, stdout or
// stderr in any encoding. Each input is one short Q2 run.
func FuzzSecretsInRunDirectory(f *testing.F) {
	f.Add("sk-fuzz-0123456789abcdef", "adm-fuzz-token-42", uint8(1), uint8(2))
	f.Add("AAAA////++++====", "tok_-_-_-_-_-_-x", uint8(4), uint8(1))
	names := redacttest.Names()
	f.Fuzz(func(t *testing.T, key, admin string, enc, wrap uint8) {
		key, admin = redacttest.KeyChars(key), redacttest.KeyChars(admin)
		if len(key) < 12 || len(admin) < 12 || len(key) > 80 || len(admin) > 80 || strings.Contains(key, admin) || strings.Contains(admin, key) {
			t.Skip()
		}
		setSecrets(t, key, admin)
		l := targettest.NewLeaker()
		defer l.Close()
		e, w := redacttest.Encodings[names[int(enc)%len(names)]], redacttest.Wrappers[int(wrap)%len(redacttest.Wrappers)]
		l.Encode = func(auth string) string { return e(fmt.Sprintf(w, auth)) }
		out, code, stdout, stderr := runLeaker(t, l)
		if code != ExitOK && code != ExitInvalidRun {
			t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
		}
		if leaks := leakedIn(t, out, map[string]string{"stdout": stdout, "stderr": stderr}, key, admin); len(leaks) > 0 {
			t.Fatalf("secrets leaked (%s of %q):\n%s", names[int(enc)%len(names)], w, strings.Join(leaks, "\n"))
		}
	})
}

// TestPeerFieldsAreBounded is attack 4 of issue 28 (a 9 MB X-Engine-Id
// made every requests.jsonl line 54 MB): a target whose X-Engine-Id is
// 128 KiB and whose /metrics label is 256 KiB. Every line
// the run writes stays bounded (requests.jsonl, metrics.jsonl), and the
// oversized series is left out with a note instead of written.
func TestPeerFieldsAreBounded(t *testing.T) {
	setSecrets(t, "sk-bounded-key-0123456789", "adm-bounded-token-0123")
	l := targettest.NewLeaker()
	defer l.Close()
	l.HeaderBytes, l.LabelBytes = 128<<10, 256<<10
	// A second of traffic: the first scrape (at the start) has time to end
	// on a loaded machine before the run stops scraping.
	slower := strings.Replace(leakQ2, "rate: 100, count: 9", "rate: 20, count: 20", 1)
	out, code, _, stderr := runLeakerWith(t, l, slower)
	if code != ExitOK && code != ExitInvalidRun {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	const maxLine = 64 << 10
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r := bufio.NewReader(f)
		for n := 1; ; n++ {
			line, err := r.ReadString('\n')
			if len(line) > maxLine {
				t.Errorf("%s:%d is %d bytes, over %d", path, n, len(line), maxLine)
			}
			if err != nil {
				break
			}
		}
		return nil
	})
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	run := readRun(t, dirs[0])
	if !strings.Contains(strings.Join(run.Notes, "\n"), "bytes") {
		t.Errorf("no note says a series was left out for its size: %q", run.Notes)
	}
	for k := range run.Summary.TargetMetrics {
		if len(k) > 1024 {
			t.Errorf("summary.target_metrics key of %d bytes", len(k))
		}
	}
}

// TestServeVerboseLogHidesRemoteEngineKey is attack 2 of issue 28 on
// serve: a remote engine that answers errors quoting the Authorization
// it received (base64 of "Bearer <key>", JSON-escaped) had its API key
// printed by `serve -v` in the retry log line.
func TestServeVerboseLogHidesRemoteEngineKey(t *testing.T) {
	const key = "sk-remote-engine-key-0123456789"
	t.Setenv("REMOTE_ENGINE_KEY", key)
	for _, name := range []string{"raw", "base64 std", "json \\u all"} {
		t.Run(name, func(t *testing.T) {
			enc := redacttest.Encodings[name]
			remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/health" {
					io.WriteString(w, "ok")
					return
				}
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprintf(w, `{"error":{"message":"bad gateway for %s"}}`, enc("Authorization: "+r.Header.Get("Authorization")))
			}))
			defer remote.Close()
			cfg := filepath.Join(t.TempDir(), "stack.yaml")
			os.WriteFile(cfg, []byte(fmt.Sprintf(`listen: 127.0.0.1:0
index: {size: 0}
engines:
  - {id: far-1, kind: llm, url: %q, model: m, api_key_env: REMOTE_ENGINE_KEY}
  - {id: far-2, kind: llm, url: %q, model: m, api_key_env: REMOTE_ENGINE_KEY}
  - {id: embed-0, kind: embedding, profile: bge-small-cpu}
`, remote.URL, remote.URL)), 0o644)
			url, stderr, stop := startServeLog(t, "serve", "-v", "--config", cfg)
			resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			stop()
			for where, text := range map[string]string{"stderr": stderr.String(), "the answer": string(body)} {
				if redacttest.Leaks(text, key) {
					t.Errorf("%s holds the remote engine's key:\n%s", where, text)
				}
			}
			if !strings.Contains(stderr.String(), "retrying on another engine") {
				t.Errorf("the retry was not logged (nothing was tested):\n%s", stderr.String())
			}
		})
	}
}

// TestURLPasswordNeverEchoed is the URL-credential echo of issue 28: a
// malformed URL with user info (htp://alice:PW@…) was quoted whole in the
// error, password included.
func TestURLPasswordNeverEchoed(t *testing.T) {
	const pw = "PW-s3cret-9876"
	bad := "htp://alice:" + pw + "@127.0.0.1:1"
	for _, args := range [][]string{
		{"run", "-e", "q2", "--quick", "--dry-run", "--target", bad},
		{"run", "-e", "q2", "--quick", "--dry-run", "--target", "http://alice:" + pw + "@127.0.0.1:1%zz"},
		{"capture", "--target", bad},
		{"run", "-e", "q1", "--dry-run", "--nodes", "2", "--nats-url", "nats://bob:" + pw + "@127.0.0.1:1%"},
	} {
		code, stdout, stderr := invokeCLI(t, args...)
		if code == ExitOK || strings.Contains(stdout+stderr, pw) {
			t.Errorf("sagebench %s: exit %d, output echoes the password:\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}
