// Package load models the load a benchmark offers to a target: an arrival
// schedule computed entirely up front from a seed, and a driver that
// dispatches each arrival at its intended time on an absolute clock.
//
// Pipeline: ScheduleConfig (YAML/flags) → Validate → NewSchedule(cfg, seed)
// gives a sorted list of offsets from the start (Poisson, constant, gamma
// with burstiness, on/off bursts, linear ramp, or a replayed trace). Driver.Run
// walks the offsets with a pacer goroutine: an arrival far from the previous
// one is waited for precisely (runtime timer, then short OS-thread sleeps);
// close ones (thousands a second) on the runtime timer, with a kernel timer
// (timerfd) as a backstop within Slack of the intended time for when the
// process is otherwise idle. Each arrival is handed to a pool of pre-started
// workers that grows when all are busy. A slow hit never
// delays a later one (open loop); the gap between intended and actual
// dispatch is measured per arrival and summarised in the Report. RunClosed
// is the closed-loop alternative (fixed concurrency), labelled as such.
package load
