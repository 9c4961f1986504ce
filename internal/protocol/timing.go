package protocol

import (
	"strconv"
	"strings"
	"time"
)

// HeaderServerTiming carries the server's own account of a response's
// timing, measured from when it received the request: queue wait, first
// token (or, for a non-streamed answer, the moment the answer was ready)
// and end. A streamed response sends it as an HTTP trailer, since the
// times are known only after the last token; any other response as a
// header. The reference stack and `sagebench calibrate`'s exact server
// set it; the client records it next to its own timings, so a record
// holds both sides and their difference is the network plus the harness.
const HeaderServerTiming = "X-Sagebench-Server-Timing"

// ServerTiming is the value of HeaderServerTiming. Zero fields were not
// measured.
type ServerTiming struct {
	Queue      time.Duration // received → an engine took the request
	FirstToken time.Duration // received → first token written
	End        time.Duration // received → last byte of the answer written
}

// String renders t as "queue_us=12;ttft_us=345;e2e_us=678".
func (t ServerTiming) String() string {
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	return "queue_us=" + us(t.Queue) + ";ttft_us=" + us(t.FirstToken) + ";e2e_us=" + us(t.End)
}

// maxServerTiming bounds the header a target may send us.
const maxServerTiming = 256

// ParseServerTiming reads a HeaderServerTiming value. Unknown keys are
// skipped; a value that is not a whole number of microseconds in
// [0, MaxDeadline] makes the whole header unusable (ok false), as does a
// header longer than 256 bytes.
func ParseServerTiming(s string) (t ServerTiming, ok bool) {
	if s == "" || len(s) > maxServerTiming {
		return t, false
	}
	for _, part := range strings.Split(s, ";") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			return ServerTiming{}, false
		}
		us, err := strconv.ParseInt(v, 10, 64)
		if err != nil || us < 0 || us > MaxDeadline.Microseconds() {
			return ServerTiming{}, false
		}
		d := time.Duration(us) * time.Microsecond
		switch k {
		case "queue_us":
			t.Queue = d
		case "ttft_us":
			t.FirstToken = d
		case "e2e_us":
			t.End = d
		}
	}
	return t, true
}
