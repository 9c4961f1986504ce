// Package remote implements engine.LLM and engine.Embedder over HTTP
// against any OpenAI-compatible server: a `sagebench serve engine` child
// process, vLLM, llama.cpp server, Ollama. The gateway treats such an
// engine like an in-process one; transport failures surface as
// engine.ErrClosed (so the gateway ejects and retries) and 429/503 as
// engine.ErrOverloaded.
//
// Pipeline: engine.ChatRequest → POST /v1/chat/completions (stream, with
// usage) → SSE events (internal/openai's reader) → engine.Token;
// inputs → POST /v1/embeddings → vectors (decoded in one pass without
// reflection, or kept as each vector's JSON text for a gateway that
// writes them as they are); GET /health for probes.
package remote
