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

// runExec runs an exec hook (Exec) with e's placeholders expanded,
// keeping the start of its output.
func runExec(ctx context.Context, argv []string, e Event) Done {
	args := make([]string, len(argv))
	for i, s := range argv {
		args[i] = expand(s, e)
	}
	out := &clipBuffer{max: maxHookOutput}
	d := Exec(ctx, args, out)
	d.Output = clip(out.b)
	return d
}

// Exec runs args (no shell) in its own process group with its output
// (stdout and stderr together) copied to out; Done.Output is left to the
// caller. It is done when the command has exited and its output is
// closed — a child it left in the background with the output still open
// keeps it running. When ctx ends first, the whole process group is
// SIGKILLed and the command is timed out; a child that left the group
// (setsid) and still holds the output cannot hold the caller: the read
// stops after exitGrace.
func Exec(ctx context.Context, args []string, out io.Writer) Done {
	d := Done{Via: "exec"}
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
