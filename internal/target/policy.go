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
		return "", fmt.Errorf("GET "+protocol.PathAdminPolicy+": %w", err)
	}
	defer resp.Body.Close()
	if err := policyStatus(resp); err != nil {
		return "", err
	}
	var b policyBody
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&b); err != nil || b.Policy == "" {
		return "", fmt.Errorf("GET "+protocol.PathAdminPolicy+": unreadable answer: %v", err)
	}
	return b.Policy, nil
}

// SetPolicy switches the target's scheduling policy to name.
func (t *Target) SetPolicy(ctx context.Context, name string) error {
	body, _ := json.Marshal(policyBody{Policy: name})
	resp, err := t.do(ctx, http.MethodPost, protocol.PathAdminPolicy, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("POST "+protocol.PathAdminPolicy+": %w", err)
	}
	defer resp.Body.Close()
	return policyStatus(resp)
}

// policyStatus maps an admin answer to nil, ErrPolicyUnsupported or an
// error carrying the target's message.
func policyStatus(resp *http.Response) error {
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusMethodNotAllowed,
		resp.StatusCode == http.StatusNotImplemented:
		return ErrPolicyUnsupported
	case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: the admin API refused us (%s); set target.admin_token_env", ErrPolicyUnsupported, resp.Status)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("%s /admin/policy: %s: %s", resp.Request.Method, resp.Status, printable(msg))
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
