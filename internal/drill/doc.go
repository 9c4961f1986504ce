// Package drill models a fault drill: a timeline of events (kill, pause,
// resume, slowdown, drain, add, remove, policy, restart, drop) run at
// their offsets beside steady open-loop load, and what it costs.
//
// Pipeline: a Config lists the events (Expand adds the resume or
// slowdown-end of an event with a duration); Drive sends the Load's
// traffic with a load.Driver while a Timeline performs each event through
// an Actor — the embedded stack's drill handle (target.Faults) and admin
// API, or exec/http hooks for an external target — recording intended
// and actual time and outcome. Afterwards the requests are cut into
// windowed series (internal/series), recovery is measured after each
// event, and lost requests (sent − ok − explicit errors) are counted. The
// Report goes to run.json; events.jsonl and windows.jsonl to the run
// directory. An event no actor could perform makes the run not comparable.
package drill
