package redact_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/redact"
)

func Example() {
	r := redact.New("sk-live-123456789") // the API key, the admin token …
	fmt.Println(r.String(`401: bad key sk-live-123456789; headers: {"Authorization":"Bearer other-token-xyz"}`))
	// Output: 401: bad key [REDACTED]; headers: {"Authorization":"Bearer [REDACTED]"}
}
