package stack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
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
	return startProcess(ctx, opts, "engine process "+ec.ID, childArgs(opts, ec, seed, listen), nil)
}

// childArgs are the arguments of startChild's `sagebench serve engine`.
func childArgs(opts Options, ec EngineConfig, seed int64, listen string) []string {
	args := []string{"serve", "engine", "--profile", ec.Profile, "--kind", ec.Kind,
		"--listen", listen, "--seed", strconv.FormatInt(seed, 10), "--id", ec.ID}
	tok := opts.tokenizer // the engine counts prompts (an embedder: inputs) as the harness does
	if ec.Kind == string(engine.KindEmbedding) {
		tok = opts.embedTokenizer
	}
	if tok != "" {
		args = append(args, "--tokenizer", tok)
	}
	return args
}

// startProcess runs the sagebench binary with args (one of its serve
// commands, which prints ListenLine once it listens) and env (nil: this
// process's) and waits (bounded by ctx and 30s) for its listening line.
// name names it in errors.
func startProcess(ctx context.Context, opts Options, name string, args, env []string) (*child, error) {
	bin := opts.EngineBinary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the sagebench binary for process engines: %w", err)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stderr = opts.EngineStderr
	// Own process group: a terminal Ctrl-C reaches only serve, which drains
	// and then stops its children; Pdeathsig kills them if serve dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{cmd: cmd, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		if u, err := scanListenLine(out); err == nil {
			lines <- u
		} else if opts.EngineStderr != nil {
			fmt.Fprintf(opts.EngineStderr, "%s: %v\n", name, err)
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
		return nil, fmt.Errorf("%s exited before listening (%v)", name, cmd.ProcessState)
	case <-ctx.Done():
		c.stop()
		return nil, fmt.Errorf("%s: no listening line: %w", name, ctx.Err())
	}
}

// maxHandshakeLine bounds one line of a child's stdout while its
// listening line is awaited.
const maxHandshakeLine = 4 << 10

// scanListenLine reads a child engine's stdout up to its listening line
// and returns the URL it names, which must be http://127.0.0.1:PORT or
// http://[::1]:PORT: a child that prints another address (or garbage)
// must not make the gateway send traffic off the machine. Lines before it
// are skipped; a line over maxHandshakeLine is an error.
func scanListenLine(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), maxHandshakeLine)
	for sc.Scan() {
		raw, ok := strings.CutPrefix(sc.Text(), ListenLine)
		if !ok {
			continue
		}
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.Scheme != "http" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
			(u.Path != "" && u.Path != "/") || !loopback(u) {
			return "", fmt.Errorf("listening line %q is not http://127.0.0.1:PORT", printableHead(raw))
		}
		return "http://" + u.Host, nil
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading the listening line: %w", err)
	}
	return "", errors.New("stdout ended without a listening line")
}

func loopback(u *url.URL) bool {
	ip := net.ParseIP(u.Hostname())
	port, err := strconv.Atoi(u.Port())
	return ip != nil && ip.IsLoopback() && err == nil && port > 0 && port < 65536
}

// printableHead is the first 80 bytes of s with control bytes escaped.
func printableHead(s string) string {
	q := strconv.Quote(s[:min(len(s), 80)])
	return q[1 : len(q)-1]
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
