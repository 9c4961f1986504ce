package gateway

import (
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The admin API changes what the gateway serves (its policy, its
// engines), so it must not be drivable by a web page the operator
// happens to open: a page can POST text/plain to http://127.0.0.1:PORT
// with any Origin, and a name of its own that resolves to 127.0.0.1
// (DNS rebinding) reads the answers too. adminGuard refuses, in order:
//
//   - a cross-site request: an Origin that is not the request's own
//     scheme://Host, or Sec-Fetch-Site other than same-origin/none (a
//     browser sends them; our clients and curl do not);
//   - a Host that is not the listener's when it listens on loopback
//     (AdminHosts): a loopback IP literal, localhost, or the configured
//     name;
//   - a POST or DELETE whose Content-Type is not application/json (a
//     form or text/plain is what a page can send without a CORS
//     preflight, which the gateway never grants);
//   - without the bearer token, when one is set (always off loopback).

// adminGuardError is the apiError of a refused admin request.
func adminGuardError(status int, code, msg string) *apiError {
	return &apiError{Status: status, Type: "invalid_request_error", Code: code, Message: "admin API: " + msg}
}

// checkAdmin returns why r may not use the admin API, or nil.
func (g *Gateway) checkAdmin(r *http.Request) *apiError {
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
		return adminGuardError(http.StatusForbidden, "cross_origin", "a cross-origin request (Origin "+clip(o)+") is refused")
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return adminGuardError(http.StatusForbidden, "cross_origin", "a "+clip(s)+" request (Sec-Fetch-Site) is refused")
	}
	if !g.adminHost(r.Host) {
		return adminGuardError(http.StatusForbidden, "bad_host", "Host "+clip(r.Host)+" is not this server's loopback address; use http://127.0.0.1:PORT")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			return adminGuardError(http.StatusUnsupportedMediaType, "content_type", "send Content-Type: application/json")
		}
	}
	if g.cfg.AdminToken != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(g.cfg.AdminToken)) != 1 {
			return &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "unauthorized",
				Message: "admin API: send Authorization: Bearer <token> (the token is in the env var named by admin.token_env)"}
		}
	}
	return nil
}

// sameOrigin reports whether origin is the request's own origin.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null", an opaque or malformed origin
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(u.Host, r.Host)
}

// adminHost reports whether host (a Host header) may reach the admin
// API: any when AdminHosts is nil (not on loopback: the token guards),
// else a loopback IP literal or one of AdminHosts, any port (a tunnel
// or port mapping may change it).
func (g *Gateway) adminHost(host string) bool {
	if g.cfg.AdminHosts == nil {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
	if ip := net.ParseIP(name); ip != nil {
		return ip.IsLoopback()
	}
	for _, h := range g.cfg.AdminHosts {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// clip bounds a header value quoted back in an error.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
