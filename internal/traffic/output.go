package traffic

import (
	"fmt"
	"sync"

	"github.com/sagebench/sagebench/internal/record"
)

// OutputCheck compares, over a run's successful LLM requests, the output
// tokens the server reported (usage completion_tokens) with those
// intended (max_tokens, pinned by ignore_eos/min_tokens where the target
// takes them). Safe for concurrent use; the zero value is ready.
type OutputCheck struct {
	mu                 sync.Mutex
	n                  int
	intended, received int64
}

// MaxOutputShortfall is the shortfall of the mean output length past
// which Note speaks.
const MaxOutputShortfall = 0.05

// Add counts r when it is a successful request with an intended output
// length and a reported one.
func (c *OutputCheck) Add(r *record.Request) {
	if !r.OK || r.OutputTokens <= 0 || r.OutputTok <= 0 {
		return
	}
	c.mu.Lock()
	c.n++
	c.intended += int64(r.OutputTokens)
	c.received += int64(r.OutputTok)
	c.mu.Unlock()
}

// Note says so when the mean reported output length misses the intended
// one by more than MaxOutputShortfall; "" otherwise.
func (c *OutputCheck) Note() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 || c.intended == 0 {
		return ""
	}
	ratio := float64(c.received) / float64(c.intended)
	if ratio >= 1-MaxOutputShortfall && ratio <= 1+MaxOutputShortfall {
		return ""
	}
	return fmt.Sprintf("output length: the target generated %.1f tokens per request on average against %.1f intended (%.0f %%) over %d requests; "+
		"the work differs from the workload's — does it take ignore_eos/min_tokens (target.output_control)?",
		float64(c.received)/float64(c.n), float64(c.intended)/float64(c.n), 100*ratio, c.n)
}
