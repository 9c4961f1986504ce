package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// collect hands the phase's records to emit until every node is done (or
// gone: it stopped answering pings) and its records are in, or the bound
// (span + Tail after the start; drain + stopMargin after an interrupt)
// has passed. It reports whether ctx interrupted the phase.
func (c *Coordinator) collect(ctx context.Context, key string, plan workload.LoadPlan, start time.Time,
	t *tally, msgs <-chan natsjs.Msg, emit func(record.Request)) (interrupted bool) {
	bound := time.NewTimer(time.Until(start.Add(plan.Span + c.cfg.Tail)))
	defer bound.Stop()
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	gone := c.watch(wctx)
	done := ctx.Done()
	var read, readBytes int // since the last purge
	var last uint64         // stream sequence of the last message read
	defer func() { c.purgeUpTo(key, last) }()
	for !t.complete() {
		select {
		case m := <-msgs:
			c.take(m, t, emit)
			if md, err := m.Metadata(); err == nil {
				last = md.Sequence.Stream
			}
			read, readBytes = read+1, readBytes+len(m.Data())
			if read >= purgeEvery || readBytes >= purgeBytes { // read messages leave the stream: room for the nodes, no memory held for a flood
				c.purgeUpTo(key, last)
				read, readBytes = 0, 0
			}
		case k := <-gone:
			t.nodes[k].gone = true
		case <-done:
			done, interrupted = nil, true
			c.stopAll(key)
			bound.Reset(time.Until(start) + plan.Drain + stopMargin)
		case <-bound.C:
			return interrupted
		}
	}
	return interrupted
}

// pingEvery is how often the coordinator asks the nodes whether they are
// there during a phase. A node is gone after missedPings in a row found
// nobody listening on its subject (its connection closed: a killed
// process), or after slowPings in a row without an answer (a hung or
// unreachable host; a busy one answers within seconds).
const (
	pingEvery   = time.Second
	missedPings = 3
	slowPings   = 10
)

// watch pings every node each pingEvery until ctx is done and sends the
// index of one that is gone (once).
func (c *Coordinator) watch(ctx context.Context) <-chan int {
	gone := make(chan int, len(c.cfg.Nodes))
	go func() {
		misses, slow := make([]int, len(c.cfg.Nodes)), make([]int, len(c.cfg.Nodes))
		t := time.NewTicker(pingEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for k := range c.cfg.Nodes {
				if misses[k] < 0 {
					continue // reported
				}
				misses[k], slow[k] = c.ping(k, misses[k], slow[k])
				if misses[k] >= missedPings || slow[k] >= slowPings {
					misses[k] = -1
					gone <- k
				}
			}
		}
	}()
	return gone
}

// ping asks node k once and returns its counts of pings in a row that
// found nobody listening and that went unanswered.
func (c *Coordinator) ping(k, misses, slow int) (int, int) {
	b, _ := json.Marshal(request{Op: opPing})
	m := &nats.Msg{Subject: c.cfg.Nodes[k].Subject, Data: b}
	seal(c.cfg.Key, coordinatorName, m)
	_, err := c.cfg.NC.RequestMsg(m, pingEvery)
	switch {
	case err == nil:
		return 0, 0
	case errors.Is(err, nats.ErrNoResponders):
		return misses + 1, 0
	}
	return 0, slow + 1
}

// take handles one message of the record subject (see takeSealed).
func (c *Coordinator) take(m natsjs.Msg, t *tally, emit func(record.Request)) {
	c.takeSealed(m.Subject(), m.Headers(), m.Data(), t, emit)
}

// purgeUpTo drops the phase's messages up to stream sequence seq, all
// read (best effort).
func (c *Coordinator) purgeUpTo(key string, seq uint64) {
	if seq == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s, err := c.js.Stream(ctx, c.stream); err == nil {
		_ = s.Purge(ctx, natsjs.WithPurgeSubject(c.prefix+key), natsjs.WithPurgeSequence(seq+1))
	}
}

// purge drops the phase's messages from the stream (best effort).
func (c *Coordinator) purge(subject string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s, err := c.js.Stream(ctx, c.stream); err == nil {
		_ = s.Purge(ctx, natsjs.WithPurgeSubject(subject))
	}
}

// account fills the report's counts, the run's totals and the notes.
func (c *Coordinator) account(phase string, t *tally, rep *workload.LoadReport) {
	names := c.names()
	rep.Delivered, rep.Missing, rep.Duplicates = len(t.got), t.missing(), t.dups
	rep.Nodes = t.report(names)
	rep.Interrupted = rep.Interrupted || t.interrupted()
	var parts []string
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, n := range t.nodes {
		tot := &c.totals[k]
		tot.scheduled += n.scheduled
		tot.delivered += n.delivered
		tot.lags = append(tot.lags, n.lags...)
		tot.maxStartLate = max(tot.maxStartLate, n.startLate)
		parts = append(parts, fmt.Sprintf("%s %d/%d lag p99 %.2f ms", names[k], n.delivered, n.scheduled, rep.Nodes[k].LagP99Ms))
	}
	c.cfg.Logf("fleet: phase %s: %s; %d duplicates dropped", phase, strings.Join(parts, ", "), t.dups)
	if rep.Missing > 0 || t.stray > 0 {
		c.notes = append(c.notes, fmt.Sprintf("load phase %s: %d of %d records never came back (%s); %d stray records dropped",
			phase, rep.Missing, len(t.owner), strings.Join(t.problems(names), "; "), t.stray))
	}
	if ie := t.integrity(); ie != nil {
		c.notes = append(c.notes, fmt.Sprintf("load phase %s: %v", phase, ie))
		c.rejected.Rejected += ie.Rejected
		for r, n := range ie.ByReason {
			c.rejected.ByReason[r] += n
		}
	}
}

// Notes say how the load was generated and what each node did, for the
// run's records.
func (c *Coordinator) Notes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	notes := []string{fmt.Sprintf("load generated by %d nodes: %s; records back over JetStream stream %s (each sealed with the run's join-token key, accepted only from the node whose shard holds its ID, deduplicated by node and ID); start instant published %v ahead, shifted by each node's clock offset",
		len(c.cfg.Nodes), ShardRule, c.stream, c.cfg.Lead)}
	for k, n := range c.cfg.Nodes {
		tot := c.totals[k]
		clock := "clock offset not measured (0 assumed)"
		if n.Clock != nil {
			clock = fmt.Sprintf("clock offset %v ± %v", n.Clock.Offset, n.Clock.Uncertainty)
		}
		notes = append(notes, fmt.Sprintf("load node %s: %s; %d/%d requests back over %d phases; send lag p50 %.2f ms, p99 %.2f ms; its driver started at most %v after the start instant",
			n.Name, clock, tot.delivered, tot.scheduled, c.phases, quantileOf(tot.lags, 0.5), quantileOf(tot.lags, 0.99), tot.maxStartLate))
	}
	return append(notes, c.notes...)
}
