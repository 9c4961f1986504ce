package result_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/result"
)

// A drill's recovery: measured when the metric came back, never when it
// did not — and a target judges either, failing closed.
func ExampleJudge() {
	recovery := result.Def{Name: "recovery_s", Unit: result.Seconds, Direction: result.Lower}
	for _, m := range []result.Metric{
		recovery.Measure(4.25, 1, "").WithResolution(0.25),
		recovery.Never("never back within 1 s for 2 s by the end of the run"),
	} {
		res := result.New("the answer", m)
		v := result.Judge(res, result.Targets{"recovery_s": 10})[0]
		fmt.Printf("%s → met %v\n", result.Format(m), v.Met)
	}
	// Output:
	// 4.25 s ± 0.250 s → met true
	// never (never back within 1 s for 2 s by the end of the run) → met false
}
