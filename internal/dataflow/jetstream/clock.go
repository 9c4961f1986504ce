package jetstream

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// ClockOffset is a worker's clock minus the coordinator's, estimated from
// NATS round trips: the sample with the shortest round trip wins, and the
// true offset lies within ±Uncertainty (half that round trip) of Offset.
// Hop times taken on different hosts differ by the hosts' offsets.
type ClockOffset struct {
	Offset      time.Duration `json:"offset_ns"`
	Uncertainty time.Duration `json:"uncertainty_ns"`
	Samples     int           `json:"samples"`
}

// answerClock replies to a clock request with this process's wall clock.
func answerClock(now func() time.Time) nats.MsgHandler {
	return func(m *nats.Msg) {
		_ = m.Respond(strconv.AppendInt(nil, now().UnixNano(), 10))
	}
}

// estimateOffset asks subject for the remote clock n times.
func estimateOffset(ctx context.Context, nc *nats.Conn, subject string, n int, now func() time.Time) (ClockOffset, error) {
	best := ClockOffset{Uncertainty: -1}
	for range n {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		t0 := now()
		m, err := nc.RequestWithContext(rctx, subject, nil)
		t1 := now()
		cancel()
		if err != nil {
			continue
		}
		remote, err := strconv.ParseInt(string(m.Data), 10, 64)
		if err != nil {
			continue
		}
		rtt := t1.Sub(t0)
		mid := t0.Add(rtt / 2).UnixNano()
		if best.Uncertainty < 0 || rtt/2 < best.Uncertainty {
			best.Offset, best.Uncertainty = time.Duration(mid-remote), rtt/2
		}
		best.Samples++
	}
	if best.Samples == 0 {
		return ClockOffset{}, errors.New("no clock sample answered")
	}
	return best, nil
}
