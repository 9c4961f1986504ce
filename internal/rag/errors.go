package rag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sagebench/sagebench/internal/openai"
)

// CallError is a stage whose request failed: the error class of the
// openai client (one of openai.ErrClasses) and the HTTP status, if any.
type CallError struct {
	Stage  string
	Class  string
	Status int
	Err    error
}

// Error formats as "<class> (status <n>): <detail>", the form
// ParseCallError reads back out of a runtime error record's message.
func (e *CallError) Error() string {
	return fmt.Sprintf("%s (status %d): %s %s: %v", e.Class, e.Status, e.Stage, "request failed", e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// ClassPayload is the class of a transaction whose payload could not be
// decoded or lacked what the stage needs (no embedding to retrieve with).
const ClassPayload = "payload"

// ParseCallError reads the class and status back out of a message that
// starts with a CallError's text (as runtime.StageError.Message does when
// an operator returned one). ok is false for any other message.
func ParseCallError(msg string) (class string, status int, ok bool) {
	head, rest, found := strings.Cut(msg, " (status ")
	if !found || (!slices.Contains(openai.ErrClasses, head) && head != ClassPayload) {
		return "", 0, false
	}
	num, _, found := strings.Cut(rest, ")")
	n, err := strconv.Atoi(num)
	if !found || err != nil || n < 0 || n > 999 {
		return "", 0, false
	}
	return head, n, true
}

func payloadError(stage string, err error) *CallError {
	return &CallError{Stage: stage, Class: ClassPayload, Err: err}
}
