package fleet

import (
	"encoding/json"
	"errors"
	"maps"

	"github.com/nats-io/nats.go"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// Every message of a phase carries its sender's name and a MAC under the
// run key (jetstream.RunKey of the join token and the run ID) over that
// name, its subject and its bytes; its Nats-Msg-Id is the MAC, so the
// stream's duplicate window drops a node's own republished copy but no
// one without the key can claim a record's slot ahead of it. The
// coordinator's requests to the nodes are sealed the same way under the
// name "coordinator". The MAC covers the Sb-Kind header too.
const (
	hdrNode         = "Sb-Node"
	hdrMAC          = "Sb-Mac"
	coordinatorName = "coordinator"
	// maxRecordMsg bounds one message on a record subject (NATS's default
	// max payload): a record line is bounded below it (record.Bound); the
	// stream refuses a larger one.
	maxRecordMsg = 1 << 20
)

// Reasons a message on a record subject is rejected.
const (
	rejectOversized = "oversized"       // larger than maxRecordMsg
	rejectUnauth    = "unauthenticated" // no MAC, a MAC that does not verify, or an unknown node
	rejectMalformed = "malformed"       // authenticated, but not a record or done message
	rejectForeign   = "foreign"         // authenticated, but about an ID (or node) outside the sender's shard
)

// seal names node as m's sender and sets its MAC (and Msg-Id).
func seal(key []byte, node string, m *nats.Msg) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	mac := jetstream.MAC(key, node, m.Subject+"\x00"+m.Header.Get(hdrKind), m.Data)
	m.Header.Set(hdrNode, node)
	m.Header.Set(hdrMAC, mac)
	m.Header.Set(hdrMsgID, mac)
}

// opened checks a sealed message of subject from a sender with its name
// in hdr; it returns the sender.
func opened(key []byte, subject string, hdr nats.Header, data []byte) (string, error) {
	node := hdr.Get(hdrNode)
	if err := jetstream.VerifyMAC(key, node, subject+"\x00"+hdr.Get(hdrKind), data, hdr.Get(hdrMAC)); err != nil {
		return "", err
	}
	return node, nil
}

// verify returns the index of the node that sealed a message on subject,
// or the reason it is rejected.
func (c *Coordinator) verify(subject string, hdr nats.Header, data []byte) (int, string) {
	if len(data) > maxRecordMsg {
		return 0, rejectOversized
	}
	node, err := opened(c.cfg.Key, subject, hdr, data)
	if err != nil {
		return 0, rejectUnauth
	}
	k, ok := c.byName[node]
	if !ok {
		return 0, rejectUnauth
	}
	return k, ""
}

// takeSealed handles one message of a phase's record subject: verified,
// from a node of the run, about that node's own shard — else counted and
// dropped.
func (c *Coordinator) takeSealed(subject string, hdr nats.Header, data []byte, t *tally, emit func(record.Request)) {
	k, why := c.verify(subject, hdr, data)
	if why == "" {
		why = c.takeFrom(k, hdr.Get(hdrKind), data, t, emit)
	}
	if why != "" {
		t.reject(why)
	}
}

// takeFrom handles an authenticated message of node k; it returns why it
// was rejected, or "".
func (c *Coordinator) takeFrom(k int, kind string, data []byte, t *tally, emit func(record.Request)) string {
	name := c.cfg.Nodes[k].Name
	if kind == kindDone {
		var d doneMsg
		if err := json.Unmarshal(data, &d); err != nil {
			return rejectMalformed
		}
		if d.Node != name {
			return rejectForeign
		}
		t.finish(k, d)
		return ""
	}
	var rec record.Request
	if err := json.Unmarshal(data, &rec); err != nil || record.CheckPeer(rec) != nil {
		return rejectMalformed
	}
	if owner, ok := t.owner[rec.ID]; !ok || owner != k || rec.Node != name {
		return rejectForeign
	}
	if t.take(&rec) {
		emit(rec)
	}
	return ""
}

// integrity is the error of a phase's rejected messages, nil when none.
func (t *tally) integrity() *workload.IntegrityError {
	if t.rejectedN == 0 {
		return nil
	}
	return &workload.IntegrityError{Rejected: t.rejectedN, ByReason: maps.Clone(t.rejected)}
}

func (t *tally) reject(why string) {
	if t.rejected == nil {
		t.rejected = map[string]int{}
	}
	t.rejected[why]++
	t.rejectedN++
}

// errNoKey is a fleet without a run key.
var errNoKey = errors.New("fleet: the run key (from the join token) is required: records are accepted only when authenticated")
