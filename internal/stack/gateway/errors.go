package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

// apiError is an error in OpenAI's shape with its HTTP status.
type apiError struct {
	Status     int
	Type       string // invalid_request_error, not_found_error, rate_limit_error, ...
	Code       string
	Message    string
	RetryAfter time.Duration
	Retried    bool // a second engine was tried: X-Sagebench-Retries: 1
}

func (e *apiError) Error() string { return e.Message }

// afterRetry returns a copy of e marked as the outcome of a retried request
// (e itself may be shared by several requests).
func (e *apiError) afterRetry(attempt int) *apiError {
	if attempt == 0 {
		return e
	}
	c := *e
	c.Retried = true
	return &c
}

func badRequest(code, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: code, Message: fmt.Sprintf(format, args...)}
}

func notFound(code, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "not_found_error", Code: code, Message: fmt.Sprintf(format, args...)}
}

func unavailable(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Type: "service_unavailable", Code: "no_healthy_engine", Message: fmt.Sprintf(format, args...), RetryAfter: time.Second}
}

func engineFailed(id string, err error) *apiError {
	return &apiError{Status: http.StatusBadGateway, Type: "engine_error", Code: "engine_failed", Message: fmt.Sprintf("engine %s failed: %v", id, err)}
}

// tooLarge is the 400 of a request no engine can ever hold.
func tooLarge(err error) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded",
		Message: "the request can never fit an engine: " + err.Error() + "; shorten the prompt or lower max_tokens"}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
}

func (e *apiError) body() errorBody {
	return errorBody{Error: errorDetail{Message: e.Message, Type: e.Type, Code: e.Code}}
}

func writeError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.Retried {
		h.Set(protocol.HeaderRetries, "1")
	}
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.Itoa(secs))
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e.body())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
