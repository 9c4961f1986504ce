package fleet

import (
	"time"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// Operations of the coordinator's requests to a node.
const (
	opPlan  = "plan"  // one part of the node's shard
	opStart = "start" // the start instant; the node replies once it holds every part
	opStop  = "stop"  // interrupt the phase (no reply)
	opPing  = "ping"  // are you there? (an empty reply)
)

// request is a coordinator → node message on the node's service subject.
type request struct {
	Op      string             `json:"op"`
	Key     string             `json:"key"`               // the phase's key: its record subject's last token
	Subject string             `json:"subject,omitempty"` // plan: where the records go
	Part    int                `json:"part,omitempty"`
	Parts   int                `json:"parts,omitempty"`
	Plan    *workload.LoadPlan `json:"plan,omitempty"`     // plan: this part's requests
	Client  *ClientSettings    `json:"client,omitempty"`   // plan: how the node's target client is set up
	StartNS int64              `json:"start_ns,omitempty"` // start: the phase's start, node clock (Unix ns)
	BaseNS  int64              `json:"base_ns,omitempty"`  // start: what record offsets count from, node clock
}

// ClientSettings are the run's target client settings a node applies
// to its own client (target.Config's timeouts and bounds; the URL and the
// API key's variable are the node's own --target and
// --target-api-key-env).
type ClientSettings struct {
	Timeout          time.Duration `json:"timeout_ns,omitempty"`
	FirstByteTimeout time.Duration `json:"first_byte_timeout_ns,omitempty"`
	MaxConns         int           `json:"max_conns,omitempty"`
	MaxBytesInFlight int64         `json:"max_bytes_in_flight,omitempty"`
	// Retry is the run's retry policy: every node applies the same one.
	Retry *openai.RetryPolicy `json:"retry,omitempty"`
}

// Apply sets s on c.
func (s ClientSettings) Apply(c target.Config) target.Config {
	c.Timeout, c.FirstByteTimeout, c.MaxConns, c.MaxBytesInFlight = s.Timeout, s.FirstByteTimeout, s.MaxConns, s.MaxBytesInFlight
	c.Retry = s.Retry
	return c
}

// SettingsOf are the client settings of c.
func SettingsOf(c target.Config) ClientSettings {
	return ClientSettings{Timeout: c.Timeout, FirstByteTimeout: c.FirstByteTimeout, MaxConns: c.MaxConns, MaxBytesInFlight: c.MaxBytesInFlight,
		Retry: c.Retry}
}

// reply is a node's answer; Error is empty on success.
type reply struct {
	Error string `json:"error,omitempty"`
}

// doneMsg is a node's last message of a phase on the record subject.
type doneMsg struct {
	Node        string `json:"node"`
	Records     int    `json:"records"` // records it published
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
	// StartLate is how long after the published start instant (its own
	// clock) the node's driver started.
	StartLate time.Duration `json:"start_late_ns,omitempty"`
}

// Headers of the messages on a record subject.
const (
	hdrMsgID = "Nats-Msg-Id"
	hdrKind  = "Sb-Kind" // "done" on a node's done message; absent on records
	kindDone = "done"
)

// maxPart bounds the requests of one plan message (~200 bytes each,
// far below NATS's default 1 MiB payload).
const maxPart = 512

// maxParts bounds the parts of one shard a node accepts (33M requests).
const maxParts = 1 << 16
