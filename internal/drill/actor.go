package drill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/target"
)

// Done is what performing an event gave.
type Done struct {
	Via         string // stack | admin | exec | http
	Err         error
	Unsupported bool   // no way to perform this action on this target
	TimedOut    bool   // a hook ran past its timeout (an exec hook's process group was killed)
	ExitStatus  *int   // exec hooks that exited
	HTTPStatus  int    // http hooks
	Output      string // a hook's output or answer, clipped
}

// Actor performs events.
type Actor interface {
	Do(ctx context.Context, e Event) Done
}

// ActorFor returns the actor of t: hooks first (when the action has one),
// then the embedded stack's drill handle for process faults, then the
// target's admin API for drain, add, remove and policy.
func ActorFor(t *target.Target, hooks map[string]Hook) Actor {
	var base Actor = admin{t: t}
	if f, ok := t.Faults(); ok {
		base = embedded{f: f, admin: admin{t: t}}
	}
	if len(hooks) == 0 {
		return base
	}
	return hooked{hooks: hooks, next: base, client: &http.Client{}}
}

// embedded performs faults through the in-process stack's handle.
type embedded struct {
	f     target.Faults
	admin admin
}

func (a embedded) Do(ctx context.Context, e Event) Done {
	d := Done{Via: "stack"}
	switch e.Action {
	case Kill:
		d.Err = a.f.Kill(e.Engine)
	case Pause:
		d.Err = a.f.Pause(e.Engine)
	case Resume:
		d.Err = a.f.Resume(e.Engine)
	case Slowdown:
		d.Err = a.f.Slowdown(e.Engine, e.Factor)
	case Restart:
		d.Err = a.f.Restart(ctx, e.Engine)
	case Drop:
		a.f.DropResponses(e.Count)
	case Cut:
		var n int
		n, d.Err = a.f.Cut()
		d.Output = fmt.Sprintf("%d connections dropped", n)
	default:
		return a.admin.Do(ctx, e)
	}
	return d
}

// admin performs reconfiguration through the target's admin API.
type admin struct{ t *target.Target }

func (a admin) Do(ctx context.Context, e Event) Done {
	d := Done{Via: "admin"}
	switch e.Action {
	case Drain:
		d.Err = a.t.DrainEngine(ctx, e.Engine)
	case Add:
		_, d.Err = a.t.AddEngine(ctx, target.EngineSpec{ID: e.Engine, Kind: e.Kind, Profile: e.Profile, Slots: e.Slots})
	case Remove:
		d.Err = a.t.RemoveEngine(ctx, e.Engine)
	case Policy:
		d.Err = a.t.SetPolicy(ctx, e.Policy)
	default:
		return Done{Unsupported: true, Err: fmt.Errorf("%s: the target is not the embedded stack and no hook is configured (hooks.%s)", e.Action, e.Action)}
	}
	if errors.Is(d.Err, target.ErrEnginesUnsupported) || errors.Is(d.Err, target.ErrPolicyUnsupported) {
		d.Unsupported = true
	}
	return d
}

// hooked performs the actions that have a hook, and passes the rest on.
type hooked struct {
	hooks  map[string]Hook
	next   Actor
	client *http.Client
}

// maxHookOutput bounds what is kept of a hook's output.
const maxHookOutput = 512

// DefaultHookTimeout bounds a hook without its own timeout.
const DefaultHookTimeout = 10 * time.Second

func (a hooked) Do(ctx context.Context, e Event) Done {
	h, ok := a.hooks[e.Action]
	if !ok {
		return a.next.Do(ctx, e)
	}
	timeout := h.Timeout
	if timeout == 0 {
		timeout = DefaultHookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d Done
	if len(h.Exec) > 0 {
		d = runExec(ctx, h.Exec, e)
	} else {
		d = a.runHTTP(ctx, h.HTTP, e)
	}
	if d.TimedOut || (d.Err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		d.TimedOut, d.Err = true, fmt.Errorf("%s hook timed out after %v: %v", d.Via, timeout, d.Err)
	}
	return d
}

func (a hooked) runHTTP(ctx context.Context, h *HTTPHook, e Event) Done {
	d := Done{Via: "http"}
	req, err := http.NewRequestWithContext(ctx, h.Method, expand(h.URL, e), strings.NewReader(expand(h.Body, e)))
	if err != nil {
		d.Err = err
		return d
	}
	if h.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		d.Err = err
		return d
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxHookOutput))
	d.HTTPStatus, d.Output = resp.StatusCode, clip(body)
	if resp.StatusCode/100 != 2 {
		d.Err = fmt.Errorf("%s %s: %s", h.Method, req.URL.Redacted(), resp.Status)
	}
	return d
}

// expand replaces the event placeholders in s.
func expand(s string, e Event) string {
	return strings.NewReplacer("{engine}", e.Engine, "{policy}", e.Policy, "{factor}", strconv.FormatFloat(e.Factor, 'f', -1, 64),
		"{profile}", e.Profile, "{kind}", e.Kind, "{count}", strconv.Itoa(e.Count)).Replace(s)
}

func clip(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > maxHookOutput {
		b = b[:maxHookOutput]
	}
	return strings.ToValidUTF8(string(b), "")
}
