package load

import (
	"fmt"
	"time"
)

// Pacer names how a run's drivers wait for their arrivals (the run's
// pacer key and --pacer flag).
const (
	// PacerEfficient waits on the runtime timer for arrivals less than
	// DefaultFineGap after the previous one, and precisely for the rest:
	// the default, cheapest at thousands of arrivals a second.
	PacerEfficient = "efficient"
	// PacerPrecise waits precisely for every arrival: lower schedule lag
	// at high rates for more CPU per request (docs/load.md).
	PacerPrecise = "precise"
)

// FineGapOf returns the Driver.FineGap of pacer ("" is PacerEfficient),
// or an error naming the pacers there are.
func FineGapOf(pacer string) (time.Duration, error) {
	switch pacer {
	case "", PacerEfficient:
		return 0, nil
	case PacerPrecise:
		return -1, nil
	}
	return 0, fmt.Errorf("pacer %q: choose %s (default) or %s", pacer, PacerEfficient, PacerPrecise)
}
