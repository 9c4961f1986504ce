package sched

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// Priority is a request's class, from X-Request-Priority.
type Priority int8

// Priority classes, lowest first.
const (
	PriorityBackground Priority = iota
	PriorityLow
	PriorityNormal
	PriorityHigh
	PriorityCritical
	numPriorities
)

var priorityNames = [numPriorities]string{protocol.PriorityBackground, protocol.PriorityLow,
	protocol.PriorityNormal, protocol.PriorityHigh, protocol.PriorityCritical}

// String returns the header spelling of p.
func (p Priority) String() string {
	if p < 0 || p >= numPriorities {
		return fmt.Sprintf("priority(%d)", int(p))
	}
	return priorityNames[p]
}

// ParsePriority parses a header value; "" is normal.
func ParsePriority(s string) (Priority, error) {
	if s == "" {
		return PriorityNormal, nil
	}
	for i, n := range priorityNames {
		if n == s {
			return Priority(i), nil
		}
	}
	return 0, fmt.Errorf("unknown priority %q (want %s)", s, strings.Join(protocol.Priorities(), ", "))
}

// Item is one queued request as a policy sees it.
type Item struct {
	Seq      uint64 // admission order; unique, increasing
	Kind     engine.Kind
	Model    string
	Tenant   string
	Priority Priority
	Arrival  time.Time
	Deadline time.Duration // SLO relative to Arrival; 0 = none
	Value    any           // the caller's payload, opaque to policies
}

// Urgency is elapsed/deadline at now; requests without a deadline use def.
func (it *Item) Urgency(now time.Time, def time.Duration) float64 {
	d := it.Deadline
	if d <= 0 {
		d = def
	}
	if d <= 0 {
		return 0
	}
	return float64(now.Sub(it.Arrival)) / float64(d)
}

// Policy orders queued items. Implementations are not safe for concurrent
// use; the caller serialises access.
type Policy interface {
	Name() string
	Push(it *Item)
	// Pop removes and returns the item to dispatch at now, or nil if empty.
	Pop(now time.Time) *Item
	Len() int
}

// Batcher is implemented by policies that dispatch several items together
// (hybrid's embedding batches). PopBatch returns up to max items that share
// one model, or nil if empty.
type Batcher interface {
	PopBatch(now time.Time, max int) []*Item
}

// Transfer moves every item from src to dst in admission (Seq) order, so a
// policy switch drops nothing and fifo order survives it.
func Transfer(dst, src Policy, now time.Time) {
	var all []*Item
	for it := src.Pop(now); it != nil; it = src.Pop(now) {
		all = append(all, it)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	for _, it := range all {
		dst.Push(it)
	}
}

// fifoList is an allocation-light FIFO of items.
type fifoList struct {
	items []*Item
	head  int
}

func (f *fifoList) len() int { return len(f.items) - f.head }

// push appends it; an item older than the tail (a request re-queued after
// a failed attempt) is inserted at its admission (Seq) place instead.
func (f *fifoList) push(it *Item) {
	n := len(f.items)
	if n == f.head || f.items[n-1].Seq < it.Seq {
		f.items = append(f.items, it)
		return
	}
	i := f.head + sort.Search(n-f.head, func(i int) bool { return f.items[f.head+i].Seq > it.Seq })
	f.items = append(f.items, nil)
	copy(f.items[i+1:], f.items[i:])
	f.items[i] = it
}

func (f *fifoList) peek() *Item {
	if f.head >= len(f.items) {
		return nil
	}
	return f.items[f.head]
}

func (f *fifoList) pop() *Item {
	it := f.peek()
	if it == nil {
		return nil
	}
	f.items[f.head] = nil
	f.head++
	if f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	} else if f.head > 64 && f.head*2 > len(f.items) {
		n := copy(f.items, f.items[f.head:])
		f.items, f.head = f.items[:n], 0
	}
	return it
}

// removeAt removes the i-th queued item (0 = head).
func (f *fifoList) removeAt(i int) *Item {
	idx := f.head + i
	it := f.items[idx]
	copy(f.items[idx:], f.items[idx+1:])
	f.items[len(f.items)-1] = nil
	f.items = f.items[:len(f.items)-1]
	return it
}
