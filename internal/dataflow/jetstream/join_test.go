package jetstream

import (
	"fmt"
	"strings"
	"testing"
)

// TestJoinBounds: a join request names a worker of at most maxWorkerName
// printable bytes; the roster holds one entry per name (a replayed
// request is the same worker) and at most maxWorkers; a sealed run
// admits only a request proven under its key.
func TestJoinBounds(t *testing.T) {
	key := RunKey("0123456789abcdef0123456789abcdef", "r")
	e := &Engine{cfg: Config{Run: "r", Version: "v", Key: key}}
	for _, tc := range []struct {
		name string
		req  joinRequest
		want string
	}{
		{"proven", joinRequest{Worker: "w1", Version: "v", Proof: joinRequestProof(key, "w1")}, ""},
		{"a long name", joinRequest{Worker: strings.Repeat("w", 1<<20), Version: "v"}, "1 to 256 printable bytes"},
		{"a name with a newline", joinRequest{Worker: "w\nINFO forged", Version: "v"}, "printable"},
		{"no proof", joinRequest{Worker: "w2", Version: "v"}, "no join token"},
		{"another worker's proof", joinRequest{Worker: "w2", Version: "v", Proof: joinRequestProof(key, "w1")}, "not the run's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.refusal(tc.req); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || len(got) > 512 {
				t.Fatalf("refusal = %.200q; want %q", got, tc.want)
			}
		})
	}
	var r roster
	for i := range maxWorkers + 10 {
		r.add(WorkerInfo{Name: fmt.Sprint("w", i%(maxWorkers+5))})
	}
	if r.count() != maxWorkers {
		t.Fatalf("roster holds %d, want %d (one per name, bounded)", r.count(), maxWorkers)
	}
}
