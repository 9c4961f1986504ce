package q4

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
)

// maxScaleOutput bounds what is kept of the scale command's output.
const maxScaleOutput = 512

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// runScaleCommand runs q4.scale_command for n engines (no shell; {n}
// replaced) within scale_timeout, as a drill runs its exec hooks (a
// background child holding the output cannot hold the run past the
// timeout), then waits scale_settle. Its output reaches an error only
// bounded and redacted.
func (s *searcher) runScaleCommand(n int) error {
	c := s.q.cfg
	args := make([]string, len(c.ScaleCommand))
	for i, a := range c.ScaleCommand {
		args[i] = strings.ReplaceAll(a, "{n}", strconv.Itoa(n))
	}
	ctx, cancel := context.WithTimeout(s.ctx, c.ScaleTimeout)
	defer cancel()
	out := &tailBuffer{max: maxScaleOutput}
	if d := drill.Exec(ctx, args, out); d.Err != nil { // a process group, killed whole at the timeout
		msg := strings.ToValidUTF8(string(bytes.TrimSpace(out.b)), "")
		if t := s.env.Target; t != nil && t.Redactor() != nil {
			msg = t.Redactor().String(msg)
		}
		return fmt.Errorf("q4.scale_command %s for n = %d: %w: %s", args[0], n, d.Err, msg)
	}
	fmt.Fprintf(s.env.Log, "q4: scaled to %d engines with %s; settling %v\n", n, args[0], c.ScaleSettle)
	t := time.NewTimer(c.ScaleSettle)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}
