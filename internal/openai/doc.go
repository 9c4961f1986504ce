// Package openai is the harness's client for OpenAI-compatible targets:
// chat completions (streamed or not), embeddings, the sagebench retrieve
// extension and the model list, with honest timing of every phase.
//
// Pipeline: Config → NewClient (one http.Transport sized to the load, with
// connect / first-byte / whole-request bounds) → Chat/Embed/Retrieve build
// the JSON request, send it with an httptrace that timestamps the
// connection and the first response byte, and read the response through a
// size limit. Streamed chats go through SSEReader, a tolerant server-sent
// events parser of our own, and each content delta is timestamped as it
// is parsed. Every outcome, including anything hostile a target sends,
// ends as a Result with an ErrClass from a closed set; nothing panics, no
// redirect is followed, non-streamed bodies held at once are bounded
// across calls (MaxBufferedBytes), and every string from the target passes
// the redaction rule (internal/redact) before it is part of an error.
package openai
