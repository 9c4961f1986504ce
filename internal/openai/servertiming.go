package openai

import (
	"net/http"

	"github.com/sagebench/sagebench/internal/protocol"
)

// serverTiming reads the target's own timing of a response: the trailer
// of a stream (known once the body was read to its end), else the header.
func serverTiming(resp *http.Response) (protocol.ServerTiming, bool) {
	v := resp.Trailer.Get(protocol.HeaderServerTiming)
	if v == "" {
		v = resp.Header.Get(protocol.HeaderServerTiming)
	}
	return protocol.ParseServerTiming(v)
}
