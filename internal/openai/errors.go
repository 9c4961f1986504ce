package openai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// Error classes of a Result (ErrClass). The set is closed: every failed
// Result carries exactly one of these.
const (
	ClassConnect     = "connect"            // could not connect (refused, unreachable, DNS, connect timeout, TLS)
	ClassReset       = "reset"              // connected, then the connection was closed or reset before the request was written whole
	ClassDropped     = "dropped_after_send" // the request was written whole, then the connection closed or reset without a response byte: the target may have read and executed it (a lost request, never replayed)
	ClassTimeout     = "timeout"            // Timeout or FirstByteTimeout elapsed, or a network read/write timed out
	ClassCanceled    = "canceled"           // the caller's context was cancelled (or its own deadline passed)
	ClassHTTP4xx     = "http_4xx"           // 4xx other than 429
	ClassHTTP429     = "http_429"           // 429 Too Many Requests
	ClassHTTP5xx     = "http_5xx"           // 5xx (and any other non-2xx status)
	ClassMalformed   = "malformed"          // the body is not the JSON we expect
	ClassTruncated   = "truncated"          // the body or stream ended early (no [DONE], cut mid-line, connection reset mid-body)
	ClassTooLarge    = "too_large"          // the body exceeded MaxResponseBytes, a line MaxLineBytes, or the client's MaxBytesInFlight was spent
	ClassStreamError = "stream_error"       // the target reported an error inside a 200 response (error event / {"error":…})
)

// ErrClasses lists every error class.
var ErrClasses = []string{ClassConnect, ClassReset, ClassDropped, ClassTimeout, ClassCanceled, ClassHTTP4xx, ClassHTTP429,
	ClassHTTP5xx, ClassMalformed, ClassTruncated, ClassTooLarge, ClassStreamError}

// errTooLarge is returned by limitedBody past MaxResponseBytes.
var errTooLarge = errors.New("response body exceeds the size limit")

// errBudget is returned once the bytes held by all calls in flight would
// exceed MaxBytesInFlight.
var errBudget = errors.New("the client's response memory budget is spent")

// errWholeTimeout is the cause set when the client's own Timeout expires.
var errWholeTimeout = errors.New("request timeout")

// StatusError is the error of a non-2xx response.
type StatusError struct {
	Status int
	Body   string // a short, sanitised prefix of the body
}

func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body)
}

// statusClass maps a non-2xx status to its class.
func statusClass(code int) string {
	switch {
	case code == 429:
		return ClassHTTP429
	case code >= 300 && code < 500: // a 3xx too: redirects are not followed
		return ClassHTTP4xx
	}
	return ClassHTTP5xx
}

// classify maps a transport or read error to its class. ctx is the
// request's context (with the client's Timeout as a cause); phase is
// "connect" (no connection obtained), "reset" (connected, the request not
// written whole), "dropped" (written whole, no response byte) or "read"
// (reading a 2xx body).
func classify(ctx context.Context, err error, phase string) string {
	switch {
	case errors.Is(err, errTooLarge), errors.Is(err, ErrLineTooLong), errors.Is(err, errBudget):
		return ClassTooLarge
	case errors.Is(context.Cause(ctx), errWholeTimeout):
		return ClassTimeout
	case ctx.Err() != nil:
		return ClassCanceled
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return ClassConnect
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return ClassConnect
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout
	}
	if strings.Contains(err.Error(), "server response headers exceeded") {
		return ClassTooLarge // MaxResponseHeaderBytes
	}
	if strings.Contains(err.Error(), "timeout awaiting response headers") {
		return ClassTimeout
	}
	switch phase {
	case "connect":
		return ClassConnect
	case "reset":
		return ClassReset
	case "dropped":
		return ClassDropped
	}
	return ClassTruncated
}
