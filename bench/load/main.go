// Command loadbench measures the sagebench load driver against a no-op
// HTTP server and turns vegeta's results into the same numbers, so that
// compare.sh can put the two side by side. Loopback only.
//
//	loadbench serve -addr-file F        instant-answer OpenAI server on 127.0.0.1:0, address written to F
//	loadbench drive -url U -rate R -duration D [-spawn]   the bare driver: POST /v1/embeddings with net/http
//	loadbench vegeta-lag -rate R < results.jsonl   (vegeta encode --to json)
//	loadbench run-lag -dir RUN_DIR      a `sagebench run` directory, measured the same way
//	loadbench cpu -- CMD ARGS…          runs CMD, prints its CPU seconds (user+system) on stderr
//
// Each measuring command prints one JSON line: scheduled, sent, ok, the
// delivered percentage and the schedule-lag quantiles in microseconds.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadbench serve|drive|vegeta-lag [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "drive":
		err = drive(os.Args[2:])
	case "vegeta-lag":
		err = vegetaLag(os.Args[2:])
	case "run-lag":
		err = runLag(os.Args[2:])
	case "cpu":
		err = cpu(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q; use serve, drive or vegeta-lag", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(2)
	}
}

// serve runs a no-op HTTP server on loopback until SIGINT/SIGTERM or
// -max (a bound, so that a forgotten server stops by itself).
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addrFile := fs.String("addr-file", "", "write host:port here once listening")
	maxLife := fs.Duration("max", 30*time.Minute, "stop after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: instant()}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *maxLife)
	defer cancel()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// EmbedBody is the request every tool sends: one embedding input.
const EmbedBody = `{"model":"bench-embed","input":["the quick brown fox"]}`

// instant answers the OpenAI paths a Q2 embeddings run uses at once, with
// fixed bodies, so that only the load generators' costs differ.
func instant() http.Handler {
	const embedding = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"model":"bench-embed","usage":{"prompt_tokens":4,"total_tokens":4}}`
	mux := http.NewServeMux()
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
		}
	}
	mux.HandleFunc("/v1/embeddings", answer(embedding))
	mux.HandleFunc("/v1/models", answer(`{"object":"list","data":[{"id":"bench-embed","object":"model"}]}`))
	mux.HandleFunc("/admin/policy", answer(`{"policy":"fifo"}`))
	mux.HandleFunc("/", answer(""))
	return mux
}

// Measurement is what drive and vegeta-lag print.
type Measurement struct {
	Tool         string  `json:"tool"`
	Rate         float64 `json:"rate"`
	Scheduled    int     `json:"scheduled"`
	Sent         int     `json:"sent"`
	OK           int     `json:"ok"`
	DeliveredPct float64 `json:"delivered_pct"`
	LagP50us     float64 `json:"lag_p50_us"`
	LagP99us     float64 `json:"lag_p99_us"`
	LagMaxus     float64 `json:"lag_max_us"`
}

func printJSON(m Measurement) error {
	return json.NewEncoder(os.Stdout).Encode(m)
}
