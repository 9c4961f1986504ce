package target

import "context"

// Faults is the embedded reference stack as a drill sees it: faults it
// can inject into the stack's engines (see stack.Stack). A URL target has
// none; drills reach it through hooks instead.
type Faults interface {
	Kill(id string) error
	Pause(id string) error
	Resume(id string) error
	Slowdown(id string, factor float64) error
	Restart(ctx context.Context, id string) error
	DropResponses(n int)
	// Cut drops every established connection to the stack's front (the
	// gateway, or the proxy before a split stack's gateway) and says how
	// many it dropped.
	Cut() (int, error)
	// Process returns the OS process id of a process engine (or of a
	// split stack's gateway, id "gateway").
	Process(id string) (int, error)
}

// Faults returns the drill handle of the embedded stack, or false for a
// URL target (or a Starter that gave none).
func (t *Target) Faults() (Faults, bool) { return t.faults, t.faults != nil }

// attach is StackSpec.Attach of the target being opened.
func (t *Target) attach(f Faults) { t.faults = f }
