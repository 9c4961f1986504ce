package raytest

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/sagebench/sagebench/internal/ray"
)

// contract watches a job's log for what docs/ray.md promises of the
// driver: its stages are ready, and it says so in a SAGEBENCH_META line
// whose ready_unix_ns is at or before its schedule's zero, before any
// transaction (and so any record) exists.
type contract struct {
	partial []byte
	ready   bool
	broken  string // why the driver broke it ("" while it keeps it)
}

// check consumes p and returns why the log breaks the contract, or "".
func (c *contract) check(p []byte) string {
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			return ""
		}
		line := string(c.partial[:i])
		c.partial = c.partial[i+1:]
		if msg := c.line(line); msg != "" {
			return msg
		}
	}
}

func (c *contract) line(line string) string {
	if _, meta, ok := strings.Cut(line, ray.MarkMeta); ok {
		var m ray.Meta
		if json.Unmarshal([]byte(meta), &m) != nil || !m.Ready() {
			return "its SAGEBENCH_META line does not declare the stages ready before the schedule's zero (ready_unix_ns ≤ start_unix_ns)"
		}
		c.ready = true
	}
	if strings.Contains(line, ray.MarkRecord) && !c.ready {
		return "a SAGEBENCH_RECORD line came before the SAGEBENCH_META line declaring the stages ready: traffic before readiness"
	}
	return ""
}
