package drill

import (
	"slices"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/record"
)

// Accounting sorts the sent requests by how they ended. Lost = Sent − OK −
// Explicit: requests with no record after the drain, and requests whose
// connection closed before any answer (reset), whose answer never came
// (timeout), was cut (truncated) or was abandoned at the drain (canceled) —
// the system never said whether it served them.
type Accounting struct {
	Sent     int            `json:"sent"`
	OK       int            `json:"ok"`
	Explicit int            `json:"explicit_errors"` // the target answered with an error, or refused the connection
	Lost     int            `json:"lost"`
	ByClass  map[string]int `json:"lost_by_class,omitempty"` // "no_record" for requests without one
	LostIDs  []string       `json:"lost_ids,omitempty"`      // the first few
}

// silent are the error classes where the answer never came.
var silent = []string{openai.ClassDropped, openai.ClassReset, openai.ClassTimeout, openai.ClassTruncated, openai.ClassCanceled}

// maxLostIDs bounds the IDs kept.
const maxLostIDs = 20

// Account counts reqs (kind "request") against sent.
func Account(sent int, reqs []record.Request) Accounting {
	a := Accounting{Sent: sent, ByClass: map[string]int{}}
	seen := 0
	for i := range reqs {
		r := &reqs[i]
		if r.Kind != "request" {
			continue
		}
		seen++
		switch {
		case r.OK:
			a.OK++
		case slices.Contains(silent, r.ErrorClass):
			a.ByClass[r.ErrorClass]++
			if len(a.LostIDs) < maxLostIDs {
				a.LostIDs = append(a.LostIDs, r.ID)
			}
		default:
			a.Explicit++
		}
	}
	if sent > seen {
		a.ByClass["no_record"] = sent - seen
	}
	a.Lost = sent - a.OK - a.Explicit
	if len(a.ByClass) == 0 {
		a.ByClass = nil
	}
	return a
}
