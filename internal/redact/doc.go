// Package redact models the one rule by which text that came from a peer
// (an error body, a header, a stream's error event, an admin answer, a
// scraped metric name or label, a worker's message) is made safe for a
// record, a note, a log or the terminal: every known secret value (the
// API key, the admin token …) is replaced by [REDACTED] wherever it hides
// — raw, percent-encoded, JSON-escaped (\uXXXX, \/) or any mix, and in
// base64 (std or URL alphabet, at any of the three alignments, so also
// inside the base64 of "Bearer <key>" or "Authorization: Bearer <key>") —
// a trailing prefix of one (a secret cut by a length limit) too; then the
// values of credential-like fields (Authorization, Bearer/Basic
// credentials, api_key, token, secret, password …) and URL passwords
// (scheme://user:PASSWORD@host) are masked whatever they hold.
//
// Field applies the rule and bounds the result (Clip: cut with a marker
// saying how much was left out). Set holds secrets learnt while a
// command runs, and Writer passes a terminal stream through the rule
// line by line.
package redact
