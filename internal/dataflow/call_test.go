package dataflow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
)

func TestCall(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for _, tc := range []struct {
		name      string
		timeout   time.Duration
		op        dataflow.OperatorFunc
		kind      dataflow.ErrorKind // "" = success
		abandoned string             // "yes", "no" or "any" (an operator returning at its deadline races the timer)
		emitted   int
	}{
		{"ok", 0, passThrough, "", "no", 1},
		{"error", 0, func(context.Context, dataflow.Record, func(dataflow.Record) error) error { return errors.New("x") }, dataflow.KindError, "no", 0},
		{"panic", 0, func(context.Context, dataflow.Record, func(dataflow.Record) error) error { panic("p") }, dataflow.KindPanic, "no", 0},
		{"timeout-respects-ctx", 20 * time.Millisecond, func(ctx context.Context, _ dataflow.Record, _ func(dataflow.Record) error) error {
			<-ctx.Done()
			return ctx.Err()
		}, dataflow.KindTimeout, "any", 0},
		{"timeout-abandoned", 20 * time.Millisecond, func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
			<-release
			return emit(in)
		}, dataflow.KindTimeout, "yes", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			se, abandoned := dataflow.Call(context.Background(), dataflow.StageConfig{Name: "s", Operator: "o", Timeout: tc.timeout}, tc.op,
				dataflow.Record{ID: "a"}, func(dataflow.Record) error { n++; return nil })
			if (se == nil) != (tc.kind == "") || (se != nil && (se.Kind != tc.kind || se.Stage != "s" || se.Operator != "o")) {
				t.Fatalf("StageError %+v, want kind %q", se, tc.kind)
			}
			if (tc.abandoned != "any" && abandoned != (tc.abandoned == "yes")) || n != tc.emitted {
				t.Fatalf("abandoned %v emitted %d, want %v %d", abandoned, n, tc.abandoned, tc.emitted)
			}
		})
	}
}

func TestCallLateEmitFails(t *testing.T) {
	var late func(dataflow.Record) error
	op := func(_ context.Context, _ dataflow.Record, emit func(dataflow.Record) error) error {
		late = emit
		return nil
	}
	dataflow.Call(context.Background(), dataflow.StageConfig{Name: "s"}, dataflow.OperatorFunc(op), dataflow.Record{ID: "a"},
		func(dataflow.Record) error { t.Fatal("late emit reached the engine"); return nil })
	if err := late(dataflow.Record{}); !errors.Is(err, dataflow.ErrEmitClosed) {
		t.Fatalf("late emit: %v, want ErrEmitClosed", err)
	}
}

func passThrough(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
	return emit(in)
}
