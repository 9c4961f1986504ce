package stack

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// child is an engine running as `sagebench serve engine` in its own process.
type child struct {
	cmd    *exec.Cmd
	url    string
	exited chan struct{}
}

// ListenLine is the line serve prints once it accepts connections; the
// parent reads a child's URL from it.
const ListenLine = "sagebench serve: listening on "

// startChild runs the engine binary listening on listen (host:port; port 0
// picks a free one) and waits (bounded by ctx and 30s) for its listening line.
func startChild(ctx context.Context, opts Options, ec EngineConfig, seed int64, listen string) (*child, error) {
	bin := opts.EngineBinary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the sagebench binary for process engines: %w", err)
		}
	}
	cmd := exec.Command(bin, "serve", "engine", "--profile", ec.Profile, "--kind", ec.Kind,
		"--listen", listen, "--seed", strconv.FormatInt(seed, 10), "--id", ec.ID)
	cmd.Stderr = opts.EngineStderr
	// Own process group: a terminal Ctrl-C reaches only serve, which drains
	// and then stops its children; Pdeathsig kills them if serve dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting engine process %s: %w", ec.ID, err)
	}
	c := &child{cmd: cmd, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), ListenLine); ok {
				lines <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { _ = cmd.Wait(); close(c.exited) }()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case c.url = <-lines:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("engine process %s exited before listening (%v)", ec.ID, cmd.ProcessState)
	case <-ctx.Done():
		c.stop()
		return nil, fmt.Errorf("engine process %s: no listening line: %w", ec.ID, ctx.Err())
	}
}

// stop asks the child to exit (SIGTERM, then SIGCONT in case a drill
// left it stopped), then kills it after 5s.
func (c *child) stop() {
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	_ = c.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}
