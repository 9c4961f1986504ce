package drill

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether process pid exists (and is not a zombie we own).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// pidFrom reads the pid a hook wrote to path (0 when none).
func pidFrom(t *testing.T, path string) int {
	t.Helper()
	b, _ := os.ReadFile(path)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// TestExecHooks: a hook ends when it has exited and its output is closed;
// one that leaves a child holding its output (the `sleep 40 &` of a
// naive restart hook) is stopped at its timeout with its whole process
// group and recorded timed out; one that detaches its child (setsid,
// output redirected: the pattern of config/external-drill/server.sh) ends
// at once and leaves the child running; output is clipped.
func TestExecHooks(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	cases := []struct {
		name     string
		argv     []string
		timedOut bool
		status   int // -1: none (killed)
		output   string
		child    string // "": none; "dead" or "alive" after the hook
	}{
		{"exits", []string{"sh", "-c", "echo {engine}"}, false, 0, "e1", ""},
		{"fails", []string{"sh", "-c", "echo no >&2; exit 3"}, false, 3, "no", ""},
		{"leaves a child on its output", []string{"sh", "-c", "sleep 40 & echo $! > " + pidfile}, true, 0, "", "dead"},
		{"runs past its timeout", []string{"sh", "-c", "echo $$ > " + pidfile + "; sleep 40"}, true, -1, "", "dead"},
		{"detaches its child", []string{"sh", "-c", "setsid sleep 40 </dev/null >/dev/null 2>&1 & echo $! > " + pidfile + "; echo started"},
			false, 0, "started", "alive"},
		{"clips its output", []string{"sh", "-c", "yes | head -c 100000"}, false, 0, strings.Repeat("y\n", maxHookOutput/2)[:maxHookOutput-1], ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(pidfile)
			const timeout = time.Second
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			d := runExec(ctx, tc.argv, Event{Engine: "e1"})
			took := time.Since(start)
			if d.TimedOut != tc.timedOut || (tc.timedOut && took > timeout+time.Second) {
				t.Errorf("timed out %v after %v (%v); want %v, within %v", d.TimedOut, took, d.Err, tc.timedOut, timeout+time.Second)
			}
			if got := -1; d.ExitStatus != nil {
				got = *d.ExitStatus
				if got != tc.status {
					t.Errorf("exit status %d; want %d", got, tc.status)
				}
			} else if tc.status != -1 {
				t.Errorf("no exit status; want %d", tc.status)
			}
			if tc.output != "" && d.Output != tc.output {
				t.Errorf("output %q (%d bytes); want %q", d.Output[:min(len(d.Output), 40)], len(d.Output), tc.output[:min(len(tc.output), 40)])
			}
			if (d.Err == nil) != (tc.status == 0 && !tc.timedOut) {
				t.Errorf("error %v", d.Err)
			}
			if tc.child == "" {
				return
			}
			pid := pidFrom(t, pidfile)
			if pid == 0 {
				t.Fatal("the hook wrote no pid")
			}
			if tc.child == "alive" {
				defer syscall.Kill(pid, syscall.SIGKILL)
			}
			deadline := time.Now().Add(2 * time.Second)
			for alive(pid) && tc.child == "dead" && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) != (tc.child == "alive") {
				t.Errorf("child %d alive %v; want %s", pid, alive(pid), tc.child)
			}
		})
	}
}
