// Package openai is the harness's client for OpenAI-compatible targets:
// chat completions (streamed or not), embeddings, the sagebench retrieve
// extension and the model list, with honest timing of every phase.
//
// Pipeline: Config → NewClient (one http.Transport sized to the load, with
// connect / first-byte / whole-request bounds) → Chat/Embed/Retrieve build
// the JSON request, send it with an httptrace that timestamps the
// connection and the first response byte, and read the response through a
// size limit and a memory budget shared by every call in flight. Streamed
// chats go through SSEReader, a tolerant server-sent events parser of our
// own, and a chunk decoder that allocates nothing per token: each delta
// (answer or reasoning) is timestamped as it is parsed, the timestamps are
// bounded by max_tokens plus a margin, and the text is kept only when
// asked for. Every outcome, including anything hostile a target sends,
// ends as a Result with an ErrClass from a closed set; nothing panics, and
// the API key is never part of any error text.
package openai
