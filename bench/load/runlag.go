package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// runLag measures a `sagebench run` directory like the other tools: its
// requests' actual send offsets and schedule lags, and its ok count.
func runLag(args []string) error {
	fs := flag.NewFlagSet("run-lag", flag.ContinueOnError)
	dir := fs.String("dir", "", "the run directory (results/q2/<run-id>)")
	rate := fs.Float64("rate", 1000, "the run's rate")
	dur := fs.Duration("duration", 5*time.Second, "the run's duration")
	tool := fs.String("tool", "sagebench-run", "tool name to print")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var sends, lags []time.Duration
	ok := 0
	var first int64 = math.MaxInt64
	err := record.ReadRequestsFile(filepath.Join(*dir, "requests.jsonl"), func(_ int, r record.Request) {
		if r.SentNS == 0 {
			return
		}
		first = min(first, r.IntendedNS)
		sends = append(sends, time.Duration(r.SentNS))
		lags = append(lags, time.Duration(r.LagMs*1e6))
		if r.OK {
			ok++
		}
	})
	if err != nil {
		return err
	}
	if len(sends) == 0 {
		return errors.New("no request was sent")
	}
	for i := range sends { // offsets from the schedule's zero, as the others
		sends[i] -= time.Duration(first)
	}
	scheduled := int(math.Round(*rate * dur.Seconds()))
	return printJSON(measurement(*tool, *rate, scheduled, sends, lags, ok))
}

// cpu runs a command and prints the CPU seconds (user + system) it and
// its children used, on stderr, as "cpu_s=…".
func cpu(args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("usage: loadbench cpu -- CMD ARGS")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if st := cmd.ProcessState; st != nil {
		fmt.Fprintf(os.Stderr, "cpu_s=%.3f\n", (st.UserTime() + st.SystemTime()).Seconds())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // the command's own exit status is the caller's to read
	}
	return err
}
