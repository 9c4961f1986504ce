package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/record"
)

// LoadFleet sends the load of open-loop phases from other nodes (the
// workers of `sagebench run --nodes N`) instead of this process. RunLoad
// shards plan across the nodes, has each send its shard at the intended
// times against a start instant it publishes, and hands every record
// that comes back to emit (once per ID, from one goroutine) before it
// returns. It returns when every record is back, or when the phase's
// bound has passed with some missing (counted in the report), or after
// ctx was cancelled and the nodes drained.
type LoadFleet interface {
	RunLoad(ctx context.Context, plan LoadPlan, emit func(record.Request)) (LoadReport, error)
}

// LoadPlan is one phase materialised: every request with its identity,
// intended offset from the phase's start and its drawn item, and what
// the requests share (Spec, opaque to the fleet: the sender decodes it).
type LoadPlan struct {
	Phase string `json:"phase"`
	// Base is what the records' offsets count from (Env.Start), in this
	// process's clock; each node gets it in its own.
	Base  time.Time     `json:"-"`
	Span  time.Duration `json:"span_ns"`  // the schedule's length
	Drain time.Duration `json:"drain_ns"` // Env.Drain
	// FineGap is Env.FineGap: the nodes pace as the run does.
	FineGap time.Duration `json:"fine_gap_ns,omitempty"`
	// MaxInFlight bounds the phase's requests in flight (0: unbounded);
	// a shard of n gets its share, ⌈MaxInFlight ÷ n⌉.
	MaxInFlight int `json:"max_in_flight,omitempty"`
	// Tokenizer is the run's tokenizer spec (Env.Tokenizer): the nodes
	// synthesize prompts in it. TokenizerSHA256 is the SHA-256 of a
	// tokenizer.json on this machine, so that a node refuses a different
	// file at the same path instead of sending other lengths.
	Tokenizer       string `json:"tokenizer,omitempty"`
	TokenizerSHA256 string `json:"tokenizer_sha256,omitempty"`
	// EmbeddingTokenizer and its SHA-256 are the run's embedding
	// tokenizer (Env.EmbeddingTokenizer; "" none), in which the nodes
	// count embedding inputs.
	EmbeddingTokenizer       string `json:"embedding_tokenizer,omitempty"`
	EmbeddingTokenizerSHA256 string `json:"embedding_tokenizer_sha256,omitempty"`
	// ChatTemplate is the run's chat template (Env.Prompts'), which the
	// nodes fit and count prompts with; nil: none.
	ChatTemplate *chattemplate.Source `json:"chat_template,omitempty"`
	Spec         json.RawMessage      `json:"spec"`
	Requests     []PlannedRequest     `json:"requests"`
}

// PlannedRequest is one request of a LoadPlan.
type PlannedRequest struct {
	ID       string          `json:"id"`
	Seq      int             `json:"seq"`
	Offset   time.Duration   `json:"at_ns"` // intended send, from the phase's start
	Deadline time.Duration   `json:"deadline_ns,omitempty"`
	Item     json.RawMessage `json:"item"`
}

// LoadReport is what RunLoad says of a phase besides its records.
type LoadReport struct {
	Start       time.Time // the published start instant (this process's clock)
	End         time.Time // when the last record arrived or the wait ended
	Delivered   int       // records handed to emit
	Missing     int       // records a node sent that never came back (a node that never said it was done: its whole unreturned share)
	Duplicates  int       // records received again and dropped
	Interrupted bool      // ctx was cancelled or a node cut its shard short
	Nodes       []NodeLoad
}

// NodeLoad is one node's part of a phase.
type NodeLoad struct {
	Node      string
	Scheduled int
	Delivered int
	LagP99Ms  float64 // send lag (sent − intended) p99 of its records
}

// NodeLostError is a load node that stopped answering mid-phase: the
// phase's records it owed never came back (Missing of them, each handed
// to emit as a failed record naming the node). The run is incomplete.
type NodeLostError struct {
	Node    string
	Phase   string
	Missing int
}

func (e *NodeLostError) Error() string {
	return fmt.Sprintf("load node %s stopped answering mid-phase %s: %d of its requests never came back and are counted as failed", e.Node, e.Phase, e.Missing)
}

// IntegrityError is a run into whose records someone without the run's
// key tried to write (or a node tried to write outside its shard): those
// messages were dropped, never recorded, and the run is invalid.
type IntegrityError struct {
	Rejected int
	ByReason map[string]int
}

func (e *IntegrityError) Error() string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(e.ByReason)) {
		parts = append(parts, fmt.Sprintf("%s %d", r, e.ByReason[r]))
	}
	return fmt.Sprintf("integrity failure: %d messages on the run's record subjects were rejected (%s); none reached the records, but someone could publish there — see docs/distributed.md",
		e.Rejected, strings.Join(parts, ", "))
}
