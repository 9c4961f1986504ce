package raytest

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/ray"
)

// Python3 is the python3 that runs sagebench's Ray driver in tests. The
// test skips when there is none, unless SAGEBENCH_REQUIRE_PYTHON3 is set
// (as .ci/run sets it): then the absence is a failure.
func Python3(t testing.TB) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("SAGEBENCH_REQUIRE_PYTHON3") != "" {
			t.Fatal("python3 not found, and SAGEBENCH_REQUIRE_PYTHON3 is set: the Ray driver's tests must run")
		}
		t.Skip("python3 not installed: the Ray driver cannot run here")
	}
	return py
}

// ShellExec is a fake cluster's Exec that runs the job's entrypoint as
// Ray does, with `sh -c` in the job's unpacked working_dir (python3 on
// PATH), its output the job's log.
func ShellExec(t testing.TB) Exec {
	Python3(t)
	return func(ctx context.Context, spec ray.JobSpec, files map[string][]byte, log io.Writer) error {
		dir := t.TempDir()
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				return err
			}
		}
		cmd := exec.CommandContext(ctx, "sh", "-c", spec.Entrypoint)
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
		cmd.Env = append(os.Environ(), EnvVars(spec)...)
		// A stop ends the entrypoint's whole process group, as Ray's
		// job supervisor does, not only the shell.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		return cmd.Run()
	}
}
