package cli

import (
	"context"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"

	"github.com/sagebench/sagebench/internal/dataflow/jetstream/jstest"
)

// envTestAsCLI makes the test binary behave as the sagebench binary, so
// that tests can spawn real `sagebench worker` processes (the path
// `run --nodes N` takes): TestMain runs Main with the process arguments
// instead of the tests.
const envTestAsCLI = "SAGEBENCH_TEST_AS_CLI"

// envTestNoFile, with envTestAsCLI, lowers the child's open-file limit
// first (RLIMIT_NOFILE), so that a test can exhaust it at a size CI holds.
const envTestNoFile = "SAGEBENCH_TEST_NOFILE"

func TestMain(m *testing.M) {
	jstest.MaybeServe() // a NATS server process of a test cluster
	if n, err := strconv.ParseUint(os.Getenv(envTestNoFile), 10, 64); err == nil && os.Getenv(envTestAsCLI) == "1" {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			panic(err)
		}
	}
	if os.Getenv(envTestAsCLI) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
