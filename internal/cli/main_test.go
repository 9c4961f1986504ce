package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/sagebench/sagebench/internal/dataflow/jetstream/jstest"
)

// envTestAsCLI makes the test binary behave as the sagebench binary, so
// that tests can spawn real `sagebench worker` processes (the path
// `run --nodes N` takes): TestMain runs Main with the process arguments
// instead of the tests.
const envTestAsCLI = "SAGEBENCH_TEST_AS_CLI"

func TestMain(m *testing.M) {
	jstest.MaybeServe() // a NATS server process of a test cluster
	if os.Getenv(envTestAsCLI) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
