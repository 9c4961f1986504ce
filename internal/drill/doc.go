// Package drill models a fault drill: a timeline of events (kill, pause,
// resume, slowdown, drain, add, remove, policy, restart, drop, cut) run at
// their offsets beside steady open-loop load, and what they cost.
//
// Pipeline: when the Load has a utilisation, a closed-loop Probe first
// finds the plateau of the target's throughput and measures the capacity
// for the load's mix in a hold there, over HTTP only, so a URL target is
// sized like the embedded stack (no plateau: NoPlateauError, and the
// drill is not run); the load offers that
// share of it; a Config lists the events (Expand adds the resume or
// slowdown-end that undoes an event with a duration); Drive sends the
// Load's traffic with a load.Driver while a Timeline performs each event
// through an Actor — the embedded stack's drill handle (target.Faults) and
// admin API, or exec/http hooks for an external target (an exec hook runs
// in its own process group with bounded output, and is killed and
// recorded timed_out at its timeout) — recording intended and actual time
// and outcome. Afterwards the requests are cut into windowed series
// (internal/series): each fault's recovery, observed until its horizon
// (the next fault, or the end of the load), is 0 "no violation", a time
// from the fault's end to ± the window step (bound [0, step] below one
// step), censored at the next fault (bound > X), or never recovered by
// the end of the load (verdict.go); the steady state before the first
// fault is checked over the requests the fault did not cut; lost
// requests (sent − ok − explicit errors) are counted by class. Outcome
// turns it into the Q's result, events.jsonl and windows.jsonl. An event
// no actor could perform, or a drill without a steady state, makes the
// run not comparable.
package drill
