package drill_test

import (
	"context"
	"testing"

	"github.com/sagebench/sagebench/internal/drill/drilltest"
	"github.com/sagebench/sagebench/internal/target"
)

func TestMain(m *testing.M) { drilltest.Main(m) }

// openGateway opens, as a URL target, a gateway in front of the remote
// engine at url and an in-process one.
func openGateway(t *testing.T, url string) *target.Target {
	t.Helper()
	s := drilltest.StartGateway(t, "ext-0", url)
	tg, err := target.Open(t.Context(), target.Config{URL: s.URL()}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}
