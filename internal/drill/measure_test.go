package drill

import (
	"reflect"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// TestFailures: a failure counts against an event only inside its window
// [start − pre, return + post] (the nearest window's event when two hold
// it); the others are background failures; requests sent with no record
// are counted apart (their time is unknown).
func TestFailures(t *testing.T) {
	s := func(x float64) int64 { return int64(x * float64(time.Second)) }
	req := func(id string, at float64, ok bool) record.Request {
		return record.Request{ID: id, IntendedNS: s(at), OK: ok, ErrorClass: map[bool]string{false: "http_5xx"}[ok]}
	}
	r := &Run{Sent: 7, Records: []record.Request{
		req("early", 1, false),      // before every window: background
		req("at-drain", 9.5, false), // in the drain's window
		req("ok", 10, true),
		req("late-drain", 13.5, false), // the drain returned at 12 s: inside +2 s
		req("gap", 16, false),          // between the windows: background
		req("at-remove", 19.9, false),
	}, Events: []Result{
		{Seq: 0, Action: Drain, ActualNS: s(10), DoneNS: s(12), Outcome: OutcomeOK},
		{Seq: 1, Action: Remove, ActualNS: s(20), DoneNS: s(20), Outcome: OutcomeOK},
		{Seq: 2, Action: Add, ActualNS: 0, Outcome: OutcomeNotPerformed},
	}}
	charged, background, noRecord := r.Failures(time.Second, 2*time.Second)
	ids := func(as []Attribution) (out []string) {
		for _, a := range as {
			out = append(out, a.ID+"@"+map[bool]string{true: "bg", false: string(rune('0' + a.Event))}[a.Event < 0])
		}
		return out
	}
	if got, want := ids(charged), []string{"at-drain@0", "late-drain@0", "at-remove@1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("charged %v; want %v", got, want)
	}
	if got, want := ids(background), []string{"early@bg", "gap@bg"}; !reflect.DeepEqual(got, want) {
		t.Errorf("background %v; want %v", got, want)
	}
	if noRecord != 1 {
		t.Errorf("no record %d; want 1", noRecord)
	}
}
