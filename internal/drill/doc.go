// Package drill models a fault drill: a timeline of events (kill, pause,
// resume, slowdown, drain, add, remove, policy, restart, drop, cut) run at
// their offsets beside steady open-loop load, and what they cost.
//
// Pipeline: when the Load has a utilisation, a closed-loop Probe first
// measures the target's capacity for the load's mix (over HTTP only, so a
// URL target is sized like the embedded stack) and the load offers that
// share of it; a Config lists the events (Expand adds the resume or
// slowdown-end that undoes an event with a duration); Drive sends the
// Load's traffic with a load.Driver while a Timeline performs each event
// through an Actor — the embedded stack's drill handle (target.Faults) and
// admin API, or exec/http hooks for an external target (an exec hook runs
// in its own process group with bounded output, and is killed and
// recorded timed_out at its timeout) — recording intended and actual time
// and outcome. Afterwards the requests are cut into windowed series
// (internal/series): each fault's recovery is never violated, recovered
// after a time from the fault's end to ± the window step, or never
// recovered; the steady state before the first fault is checked; lost
// requests (sent − ok − explicit errors) are counted by class. Outcome
// turns it into the Q's result, events.jsonl and windows.jsonl. An event
// no actor could perform, or a drill without a steady state, makes the
// run not comparable.
package drill
