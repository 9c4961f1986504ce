// Package proxy is the front of the split reference stack: an HTTP
// reverse proxy in the serving process (the harness's, for the embedded
// target) between the clients and the gateway's process, which a drill
// can make drop every established connection at once (Cut) — the streams
// in flight are cut, as when a load balancer or a network path fails. It
// also serves the drop fault (the next n API answers start and never end).
//
// Pipeline: a client connection is tracked from accept to close (Conns,
// which any http.Server can use through its ConnState hook); each request
// is forwarded by httputil.ReverseProxy, streamed without buffering. An
// upstream that cannot be reached answers 502, one that dies mid-answer
// leaves the answer cut, as a real L7 balancer would.
package proxy
