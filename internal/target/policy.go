package target

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sagebench/sagebench/internal/protocol"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrPolicyUnsupported is returned when the target has no admin policy API
// (any gateway but the reference stack, typically).
var ErrPolicyUnsupported = errors.New("the target cannot switch scheduling policy (no /admin/policy)")

type policyBody struct {
	Policy string `json:"policy"`
}

// Policy returns the target's current scheduling policy.
func (t *Target) Policy(ctx context.Context) (string, error) {
	resp, err := t.do(ctx, http.MethodGet, protocol.PathAdminPolicy, nil)
	if err != nil {
		return "", t.adminFailure("GET /admin/policy", err)
	}
	defer resp.Body.Close()
	if err := t.policyStatus(resp); err != nil {
		return "", err
	}
	var b policyBody
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&b); err != nil || b.Policy == "" {
		return "", &AdminError{Op: "GET /admin/policy", Status: resp.Status, Message: "unreadable answer: " + t.redactor.Error(err).Error()}
	}
	return b.Policy, nil
}

// SetPolicy switches the target's scheduling policy to name.
func (t *Target) SetPolicy(ctx context.Context, name string) error {
	body, _ := json.Marshal(policyBody{Policy: name})
	resp, err := t.do(ctx, http.MethodPost, protocol.PathAdminPolicy, bytes.NewReader(body))
	if err != nil {
		return t.adminFailure("POST /admin/policy", err)
	}
	defer resp.Body.Close()
	return t.policyStatus(resp)
}

// AdminError is a failed admin call that is not ErrPolicyUnsupported: the
// target answered 5xx (or another unexpected status), or the connection
// failed. It is a tool error of the run (exit 1), not a reason to skip the
// policy. Message is redacted (no secret of ours, no credential-like field).
type AdminError struct {
	Op      string // e.g. "POST /admin/policy"
	Status  string // "" when no answer came
	Message string
}

func (e *AdminError) Error() string {
	if e.Status == "" {
		return fmt.Sprintf("%s: %s", e.Op, e.Message)
	}
	if e.Message == "" {
		return fmt.Sprintf("%s: %s", e.Op, e.Status)
	}
	return fmt.Sprintf("%s: %s: %s", e.Op, e.Status, e.Message)
}

// maxAdminExcerpt bounds the part of an admin error body kept in messages.
const maxAdminExcerpt = 512

// policyStatus maps an admin answer to nil, ErrPolicyUnsupported or an
// *AdminError carrying the target's message, redacted.
func (t *Target) policyStatus(resp *http.Response) error {
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusMethodNotAllowed,
		resp.StatusCode == http.StatusNotImplemented:
		return ErrPolicyUnsupported
	case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: the admin API refused us (%s); set target.admin_token_env", ErrPolicyUnsupported, resp.Status)
	}
	return &AdminError{Op: resp.Request.Method + " /admin/policy", Status: resp.Status, Message: t.excerpt(resp)}
}

// excerpt is the start of an admin answer's body as one printable,
// redacted line. The whole excerpt read is redacted before it is cut: a
// secret straddling the cut would otherwise leave its start behind.
func (t *Target) excerpt(resp *http.Response) string {
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 8*maxAdminExcerpt))
	clean := t.redactor.String(printable(msg))
	if len(clean) > maxAdminExcerpt {
		clean = t.redactor.String(strings.ToValidUTF8(clean[:maxAdminExcerpt], "") + "…")
	}
	return clean
}

// adminFailure is the *AdminError of an admin call that got no answer.
func (t *Target) adminFailure(op string, err error) error {
	return &AdminError{Op: op, Message: t.redactor.Error(err).Error()}
}

// printable makes one printable line of a target's answer: control
// characters, invalid UTF-8 and runs of white space become one space.
func printable(b []byte) string {
	s := strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, string(b))
	return strings.Join(strings.Fields(s), " ")
}
