package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// StaleStreamsError is returned by Deploy when the server holds streams of
// runs whose coordinator no longer answers (a crashed run).
type StaleStreamsError struct {
	Streams []string
	URL     string // redacted
}

func (e *StaleStreamsError) Error() string {
	return fmt.Sprintf("NATS at %s holds %d stream(s) of crashed sagebench runs (%s); remove them with: sagebench worker --nats-url %s --clean",
		e.URL, len(e.Streams), strings.Join(e.Streams, ", "), e.URL)
}

// StaleStreams lists the sagebench streams on the server whose run's
// coordinator does not answer a ping within a second.
func StaleStreams(ctx context.Context, nc *nats.Conn) ([]string, error) {
	js, err := natsjs.New(nc)
	if err != nil {
		return nil, err
	}
	lister := js.StreamNames(ctx)
	live := map[string]bool{}
	var stale []string
	for name := range lister.Name() {
		run, ok := runOfStream(name)
		if !ok {
			continue
		}
		alive, seen := live[run]
		if !seen {
			_, perr := nc.Request(names{run: run}.pingSubject(), nil, time.Second)
			alive = perr == nil
			live[run] = alive
		}
		if !alive {
			stale = append(stale, name)
		}
	}
	if err := lister.Err(); err != nil && !errors.Is(err, natsjs.ErrEndOfData) {
		return nil, fmt.Errorf("listing streams: %w", err)
	}
	slices.Sort(stale)
	return stale, nil
}

// CleanStale deletes the streams StaleStreams lists and returns them.
func CleanStale(ctx context.Context, nc *nats.Conn) ([]string, error) {
	stale, err := StaleStreams(ctx, nc)
	if err != nil {
		return nil, err
	}
	js, err := natsjs.New(nc)
	if err != nil {
		return nil, err
	}
	for _, s := range stale {
		if err := js.DeleteStream(ctx, s); err != nil && !errors.Is(err, natsjs.ErrStreamNotFound) {
			return nil, fmt.Errorf("deleting stream %s: %w", s, err)
		}
	}
	return stale, nil
}

func (e *Engine) checkStale(ctx context.Context) error {
	if e.cfg.CleanStale {
		cleaned, err := CleanStale(ctx, e.nc)
		if len(cleaned) > 0 {
			e.cfg.Logf("deleted %d stream(s) of crashed runs: %s", len(cleaned), strings.Join(cleaned, ", "))
		}
		return err
	}
	stale, err := StaleStreams(ctx, e.nc)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		return &StaleStreamsError{Streams: stale, URL: e.url()}
	}
	return nil
}
