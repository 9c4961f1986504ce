package summary

import (
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// retryAcc tallies the attempts of the requests (not stages): what the
// client's retry policy cost the target and bought the user.
type retryAcc struct {
	requests, attempts, retried, replays int
	okFirst, metFirst                    int // ok (and SLO met) on the first attempt
}

func (a *retryAcc) add(r *record.Request) {
	a.requests++
	a.attempts += max(r.Attempts, 1)
	a.replays += r.Replays
	if r.Attempts > 1 {
		a.retried++
	}
	if r.OK && r.Attempt <= 1 {
		a.okFirst++
		if r.SLOMet {
			a.metFirst++
		}
	}
}

// summary is the run's retry account, or nil when every request was sent
// once (nothing to report beyond an amplification of 1).
func (a *retryAcc) summary(all *acc, total time.Duration) *record.RetrySummary {
	if a.retried == 0 && a.replays == 0 {
		return nil
	}
	return &record.RetrySummary{
		Requests:                 a.requests,
		Attempts:                 a.attempts,
		Amplification:            ratio(a.attempts, a.requests),
		Retried:                  a.retried,
		TransportReplays:         a.replays,
		SucceededFirstAttempt:    a.okFirst,
		Goodput:                  perSecond(all.met, total),
		GoodputWithoutRetries:    perSecond(a.metFirst, total),
		ThroughputWithoutRetries: perSecond(a.okFirst, total),
		UserLatency:              all.service.latency(),
	}
}
