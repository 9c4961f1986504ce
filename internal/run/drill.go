package run

import (
	"encoding/json"
	"fmt"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// applyDrill copies a drill's report into run.json and returns the
// workload's own invalid reasons.
func applyDrill(run *record.Run, o workload.Outcome) []string {
	reasons := append([]string{}, o.Invalid...)
	if o.Drill != nil {
		b, err := json.Marshal(o.Drill)
		if err != nil {
			return append(reasons, fmt.Sprintf("drill report not recorded: %v", err))
		}
		run.Drill = b
	}
	return reasons
}
