package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/calibrate"
)

// calibrateServeOptions are `sagebench calibrate serve`'s flags.
type calibrateServeOptions struct {
	server  calibrate.Config
	serve   calibrate.Serve
	logPath string
	urlFile string
	forDur  time.Duration
}

const calibrateServeLong = `Run the exact-deadline conformance server for any load tool.

An OpenAI-compatible server on a loopback address (POST /v1/chat/completions
and /v1/completions, streamed or not; GET /v1/models) that answers on a
documented schedule: the first content token --ttft after it receives the
request, each next one --itl later, max_tokens tokens (capped at
--max-tokens; --tokens for a request that names none), one token per chunk
("t "), usage in the last chunk. With --role-chunk a streamed chat first
gets a content-free {"role":"assistant"} chunk at once, as vLLM sends, so
a tool that times the first chunk rather than the first content shows it.

Every answered request is appended to --log (JSON lines): its receipt
time and what the server really did, in ms from receipt — when it flushed
each content chunk and the last byte — next to the due TTFT and ITL.
Grade a tool's export against it with 'sagebench calibrate grade'.

Runs until SIGINT/SIGTERM or --for. Exit codes: 0 ok, 1 error, 2 usage.`

func newCalibrateServeCmd() *cobra.Command {
	o := &calibrateServeOptions{}
	cmd := &cobra.Command{
		Use:     "serve --log truth.jsonl [flags]",
		Short:   "Run the exact-deadline conformance server and write its ground-truth log",
		Long:    calibrateServeLong,
		Example: "  sagebench calibrate serve --addr 127.0.0.1:8765 --ttft 50ms --itl 10ms --tokens 16 --log truth.jsonl",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.serve.Addr, "addr", "127.0.0.1:0", "loopback listen address")
	f.DurationVar(&o.server.TTFT, "ttft", 50*time.Millisecond, "schedule: receipt → first content token")
	f.DurationVar(&o.server.ITL, "itl", 10*time.Millisecond, "schedule: between content tokens")
	f.DurationVar(&o.server.EmbedLatency, "embed-latency", 5*time.Millisecond, "schedule: receipt → embeddings")
	f.IntVar(&o.server.MaxTokens, "max-tokens", 512, "schedule: cap on a request's max_tokens")
	f.IntVar(&o.serve.DefaultTokens, "tokens", 16, "schedule: output tokens of a request naming no max_tokens")
	f.BoolVar(&o.serve.RoleChunk, "role-chunk", false, "streamed chat: send a content-free role chunk at receipt")
	f.StringSliceVar(&o.serve.Models, "model", []string{"cal"}, "model ids GET /v1/models lists (any model is answered)")
	f.StringVar(&o.logPath, "log", "", "ground-truth log to write (JSON lines; required)")
	f.StringVar(&o.urlFile, "url-file", "", "write the server's base URL to this file once listening")
	f.DurationVar(&o.forDur, "for", 0, "stop after this long (default: until SIGINT/SIGTERM)")
	return cmd
}

func (o *calibrateServeOptions) run(cmd *cobra.Command) error {
	if o.logPath == "" {
		return usageErrorf("--log: required (the ground-truth log to write)")
	}
	if err := o.server.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	if err := o.serve.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	f, err := os.Create(o.logPath)
	if err != nil {
		return usageErrorf("--log %s: %v", o.logPath, err)
	}
	defer f.Close()
	opts := o.serve
	opts.Log = f
	srv, err := calibrate.StartServe(o.server, opts)
	if err != nil {
		return withCode(ExitError, err)
	}
	if err := o.announce(cmd.OutOrStdout(), srv); err != nil {
		srv.Close()
		return withCode(ExitError, err)
	}
	o.wait(cmd)
	if err := srv.Close(); err != nil {
		return withCode(ExitError, err)
	}
	return f.Close()
}

func (o *calibrateServeOptions) announce(w io.Writer, srv *calibrate.Server) error {
	c := srv.Config()
	fmt.Fprintf(w, "serving %s (ttft %v, itl %v, default tokens %d); truth log %s\n", srv.URL(), c.TTFT, c.ITL, o.serve.DefaultTokens, o.logPath)
	if o.urlFile == "" {
		return nil
	}
	if err := os.WriteFile(o.urlFile, []byte(srv.URL()+"\n"), 0o644); err != nil {
		return fmt.Errorf("--url-file: %w", err)
	}
	return nil
}

func (o *calibrateServeOptions) wait(cmd *cobra.Command) {
	var stop <-chan time.Time
	if o.forDur > 0 {
		t := time.NewTimer(o.forDur)
		defer t.Stop()
		stop = t.C
	}
	select {
	case <-cmd.Context().Done():
	case <-stop:
	}
}
