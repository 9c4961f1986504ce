package jetstream_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// A graph runs on an embedded JetStream server exactly as on the
// in-process engine: here the coordinator also serves every stage, so no
// worker process is needed.
func Example() {
	ctx := context.Background()
	srv, err := jetstream.StartEmbedded(ctx, jetstream.ServerConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()
	reg := dataflow.NewRegistry()
	_ = reg.RegisterFunc("upper", func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		in.Payload = []byte(strings.ToUpper(string(in.Payload)))
		return emit(in)
	})
	eng, err := jetstream.New(jetstream.Config{Conn: jetstream.ConnConfig{URL: srv.URL()}, Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close()
	g := dataflow.Graph{Name: "demo", Stages: []dataflow.StageConfig{{Name: "shout", Operator: "upper"}}}
	if err := eng.Deploy(ctx, g); err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	go func() {
		for i, w := range []string{"hello", "distributed", "world"} {
			_ = eng.Submit(ctx, dataflow.Record{ID: fmt.Sprint(i), Payload: []byte(w)})
		}
		eng.CloseInput()
	}()
	var out []string
	for r := range eng.Results() {
		out = append(out, r.ID+"="+string(r.Payload))
	}
	slices.Sort(out)
	fmt.Println(out, <-served)
	// Output: [0=HELLO 1=DISTRIBUTED 2=WORLD] <nil>
}
