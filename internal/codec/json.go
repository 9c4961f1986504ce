package codec

import (
	"encoding/json"
	"fmt"
)

// MarshalJSON encodes v as a JSON array of numbers with encoding/json, the
// baseline the binary formats are measured against. JSON has no NaN or
// Inf; such a value is an ErrNonFinite error.
func MarshalJSON(v []float32) ([]byte, error) {
	for i, x := range v {
		if x-x != 0 {
			return nil, fmt.Errorf("%w: value %v at index %d in JSON payload", ErrNonFinite, x, i)
		}
	}
	return json.Marshal(v)
}

// UnmarshalJSON decodes a JSON array of numbers with encoding/json.
// Anything else (another JSON type, a number outside float32 range,
// trailing data) is an ErrCorrupt error.
func UnmarshalJSON(p []byte) ([]float32, error) {
	var v []float32
	if err := json.Unmarshal(p, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if v == nil {
		return nil, fmt.Errorf("%w: JSON null is not an array", ErrCorrupt)
	}
	return v, nil
}
