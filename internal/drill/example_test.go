package drill_test

import (
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
)

// A timed pause and slowdown get their undo events.
func ExampleExpand() {
	for _, e := range drill.Expand([]drill.Event{
		{At: 20 * time.Second, Action: drill.Kill, Engine: "llm-1"},
		{At: 5 * time.Second, Action: drill.Pause, Engine: "llm-1", Duration: 3 * time.Second},
		{At: 30 * time.Second, Action: drill.Slowdown, Engine: "llm-0", Factor: 4, Duration: 10 * time.Second},
	}) {
		fmt.Println(e)
	}
	// Output:
	// pause llm-1 at 5s
	// resume llm-1 at 8s
	// kill llm-1 at 20s
	// slowdown llm-0 (factor 4) at 30s
	// slowdown llm-0 (factor 1) at 40s
}
