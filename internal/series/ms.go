package series

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Ms is a windowed latency quantile in a record (windows.jsonl), in ms:
// a JSON number when measured, the string "+Inf" when failed requests
// reach the quantile's rank (a failed request counts +∞; JSON has no
// infinity, and "+Inf" is how Prometheus' JSON API writes one), and null
// when the window has nothing to measure (no request, or for TTFT none
// that streams). A NaN Ms is that null; no sentinel number stands for
// either state.
type Ms float64

// inf is the JSON of +∞.
const inf = `"+Inf"`

// MarshalJSON writes a number, "+Inf" or null.
func (m Ms) MarshalJSON() ([]byte, error) {
	v := float64(m)
	switch {
	case math.IsNaN(v):
		return []byte("null"), nil
	case math.IsInf(v, 1):
		return []byte(inf), nil
	case math.IsInf(v, -1) || v < 0:
		return nil, fmt.Errorf("latency %v ms: not a latency", v)
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads a non-negative number, "+Inf" or null (NaN).
func (m *Ms) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch string(b) {
	case "null":
		*m = Ms(math.NaN())
		return nil
	case inf:
		*m = Ms(math.Inf(1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("latency %.40q: want a number of ms, \"+Inf\" or null", b)
	}
	if v < 0 {
		return fmt.Errorf("latency %v ms: negative", v)
	}
	*m = Ms(v)
	return nil
}

// Failed reports whether m is +∞: failures at the quantile's rank.
func (m Ms) Failed() bool { return math.IsInf(float64(m), 1) }

// Measured reports whether m is a finite latency.
func (m Ms) Measured() bool { v := float64(m); return !math.IsNaN(v) && !math.IsInf(v, 0) }
