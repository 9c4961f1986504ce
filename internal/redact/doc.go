// Package redact models the one rule by which a string that came from a
// target (an error body, a stream error, an admin answer) is made safe for
// a record, a note, a log or the terminal: every known secret value (the
// API key, the admin token, and their URL-, JSON- and base64-encoded
// forms) is replaced by [REDACTED], a trailing prefix of one (a secret
// cut by a length limit) too, and the values of credential-like fields
// (Authorization, Bearer/Basic credentials, api_key, token, secret,
// password …) are masked whatever they hold.
package redact
