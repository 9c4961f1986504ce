package target

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/sagebench/sagebench/internal/protocol"
)

// ErrEnginesUnsupported is returned when the target has no engines admin
// API (404, 405, 501) or refuses us (401, 403): its size cannot be changed
// from the harness.
var ErrEnginesUnsupported = errors.New("the target has no engines admin API (" + protocol.PathAdminEngines + ")")

// EngineSpec asks the target to add an engine: a simulated profile of the
// reference stack, or a remote OpenAI-compatible URL with its model.
type EngineSpec struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"` // llm | embedding
	Profile string `json:"profile,omitempty"`
	URL     string `json:"url,omitempty"`
	Model   string `json:"model,omitempty"`
	Slots   int    `json:"slots,omitempty"`
}

// Engine is what the target reports of one engine.
type Engine struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Model   string `json:"model"`
	Profile string `json:"profile,omitempty"`
	State   string `json:"state"` // active, draining, drained, ejected, removed
	Running int    `json:"running"`
	Slots   int    `json:"slots"`
}

// maxAdminAnswer bounds what an admin answer may hold.
const maxAdminAnswer = 1 << 20

// Engines lists the target's engines.
func (t *Target) Engines(ctx context.Context) ([]Engine, error) {
	var list struct {
		Data []Engine `json:"data"`
	}
	if err := t.adminCall(ctx, http.MethodGet, protocol.PathAdminEngines, nil, &list); err != nil {
		return nil, err
	}
	return list.Data, nil
}

// AddEngine adds an engine and returns it as the target reports it.
func (t *Target) AddEngine(ctx context.Context, spec EngineSpec) (Engine, error) {
	var e Engine
	body, _ := json.Marshal(spec)
	err := t.adminCall(ctx, http.MethodPost, protocol.PathAdminEngines, body, &e)
	return e, err
}

// DrainEngine stops new work to engine id and waits (as long as ctx
// allows) until its running requests have finished.
func (t *Target) DrainEngine(ctx context.Context, id string) error {
	return t.adminCall(ctx, http.MethodPost, protocol.PathAdminEngines+"/"+url.PathEscape(id)+"/drain", nil, nil)
}

// RemoveEngine removes engine id; requests still running on it fail.
func (t *Target) RemoveEngine(ctx context.Context, id string) error {
	return t.adminCall(ctx, http.MethodDelete, protocol.PathAdminEngines+"/"+url.PathEscape(id), nil, nil)
}

// adminCall does one admin call and decodes a 2xx answer into out (nil: the
// body is discarded).
func (t *Target) adminCall(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	resp, err := t.do(ctx, method, path, rd)
	if err != nil {
		return t.adminFailure(method+" "+path, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound && method == http.MethodGet,
		resp.StatusCode == http.StatusMethodNotAllowed, resp.StatusCode == http.StatusNotImplemented:
		return ErrEnginesUnsupported
	case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: the admin API refused us (%s); set target.admin_token_env", ErrEnginesUnsupported, resp.Status)
	case resp.StatusCode/100 != 2:
		return &AdminError{Op: method + " " + path, Status: resp.Status, Message: t.excerpt(resp)}
	}
	if out == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxAdminAnswer))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAdminAnswer)).Decode(out); err != nil {
		return &AdminError{Op: method + " " + path, Status: resp.Status, Message: "unreadable answer: " + t.redactor.Error(err).Error()}
	}
	return nil
}
