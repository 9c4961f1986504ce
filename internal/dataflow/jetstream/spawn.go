package jetstream

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// SpawnConfig says how to start local worker processes (sagebench run
// --nodes N without --nats-url).
type SpawnConfig struct {
	N   int
	URL string // the server the workers join
	Run string // the run they join
	// Exe is the program to start; "" means this executable.
	Exe string
	// Args are its arguments; nil means
	// worker --nats-url URL --run RUN --once.
	Args []string
	// Env is added to this process's environment (credentials travel
	// here, never in Args). Each worker also gets SAGEBENCH_WORKER_NAME
	// (worker-<i>), SAGEBENCH_JOIN_URL and SAGEBENCH_JOIN_RUN.
	Env    []string
	Stderr io.Writer // where the workers' stderr goes; nil discards it
}

// Procs are spawned worker processes.
type Procs struct {
	cmds []*exec.Cmd
	done []chan error
}

// SpawnWorkers starts cfg.N worker processes.
func SpawnWorkers(cfg SpawnConfig) (*Procs, error) {
	if cfg.N < 1 {
		return nil, fmt.Errorf("spawning workers: n %d: must be ≥ 1", cfg.N)
	}
	exe := cfg.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("spawning workers: %w", err)
		}
	}
	args := cfg.Args
	if args == nil {
		args = []string{"worker", "--nats-url", cfg.URL, "--run", cfg.Run, "--once"}
	}
	p := &Procs{}
	for i := range cfg.N {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), cfg.Env...)
		cmd.Env = append(cmd.Env, fmt.Sprintf("SAGEBENCH_WORKER_NAME=worker-%d", i),
			"SAGEBENCH_JOIN_URL="+cfg.URL, "SAGEBENCH_JOIN_RUN="+cfg.Run)
		cmd.Stderr = cfg.Stderr
		if err := cmd.Start(); err != nil {
			_ = p.Stop(time.Second)
			return nil, fmt.Errorf("spawning worker %d (%s): %w", i, exe, err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		p.cmds, p.done = append(p.cmds, cmd), append(p.done, done)
	}
	return p, nil
}

// Len is the number of processes.
func (p *Procs) Len() int { return len(p.cmds) }

// Pid is the process ID of worker i.
func (p *Procs) Pid(i int) int { return p.cmds[i].Process.Pid }

// Kill sends SIGKILL to worker i (fault injection).
func (p *Procs) Kill(i int) error { return p.cmds[i].Process.Kill() }

// Stop sends SIGTERM to every worker (they drain and leave), waits up to
// timeout and kills the ones still running. It returns the first
// unexpected exit error.
func (p *Procs) Stop(timeout time.Duration) error {
	for _, c := range p.cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.After(timeout)
	var errs []error
	var once sync.Once
	for i, d := range p.done {
		select {
		case err := <-d:
			d <- err // keep it for Wait
			if err != nil && !terminated(err) {
				errs = append(errs, fmt.Errorf("worker %d: %w", i, err))
			}
		case <-deadline:
			once.Do(func() {
				for _, c := range p.cmds {
					_ = c.Process.Kill()
				}
			})
			<-d
			errs = append(errs, fmt.Errorf("worker %d: still running after %s; killed", i, timeout))
		}
	}
	return errors.Join(errs...)
}

// terminated reports an exit caused by a signal we sent.
func terminated(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}
