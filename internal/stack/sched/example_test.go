package sched_test

import (
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/stack/sched"
)

// Under the priority policy the most important queued request goes first,
// whatever its arrival order.
func ExampleNew() {
	p, _ := sched.New(sched.Prio, sched.Config{})
	now := time.Now()
	for i, pr := range []sched.Priority{sched.PriorityLow, sched.PriorityCritical, sched.PriorityNormal} {
		p.Push(&sched.Item{Seq: uint64(i + 1), Priority: pr, Arrival: now, Value: pr.String()})
	}
	for it := p.Pop(now); it != nil; it = p.Pop(now) {
		fmt.Println(it.Value)
	}
	// Output:
	// critical
	// normal
	// low
}
