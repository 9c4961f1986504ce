package drill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// exitGrace bounds how long a hook's process may take to be reaped after
// its process group was killed, and how long its output is still read
// after that.
const exitGrace = 500 * time.Millisecond

// runExec runs an exec hook in its own process group with its output
// (stdout and stderr together) read into a bounded buffer. It is done
// when the command has exited and its output is closed — a child it left
// in the background with the output still open keeps it running. When
// ctx ends first, the whole process group is SIGKILLed and the hook is
// timed out; a child that left the group (setsid) and still holds the
// output cannot hold the run: the read stops after exitGrace.
func runExec(ctx context.Context, argv []string, e Event) Done {
	d := Done{Via: "exec"}
	args := make([]string, len(argv))
	for i, s := range argv {
		args[i] = expand(s, e)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		d.Err = fmt.Errorf("hook output pipe: %w", err)
		return d
	}
	defer pr.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pw.Close() // the children hold the write end now
	if err != nil {
		d.Err = err
		return d
	}
	out := &clipBuffer{max: maxHookOutput}
	read := make(chan struct{})
	go func() { _, _ = io.Copy(out, pr); close(read) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-exited:
		select {
		case <-read:
		case <-ctx.Done():
			d.TimedOut = true
		}
	case <-ctx.Done():
		d.TimedOut = true
	}
	if d.TimedOut {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = pr.SetReadDeadline(time.Now().Add(exitGrace))
		select {
		case werr = <-exited:
		case <-time.After(exitGrace):
		}
	}
	<-read
	d.Output = clip(out.b)
	if cmd.ProcessState != nil && cmd.ProcessState.Exited() {
		st := cmd.ProcessState.ExitCode()
		d.ExitStatus = &st
	}
	switch {
	case !d.TimedOut:
		d.Err = werr
	case d.ExitStatus != nil:
		d.Err = errors.New("it exited, but a process it started still held its output; its process group was killed")
	default:
		d.Err = errors.New("still running; its process group was killed")
	}
	return d
}

// clipBuffer keeps the first max bytes written to it and discards the rest.
type clipBuffer struct {
	b   []byte
	max int
}

func (c *clipBuffer) Write(p []byte) (int, error) {
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
