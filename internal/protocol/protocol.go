package protocol

import (
	"net/http"
	"strconv"
	"time"
)

// Request headers the gateway honours.
const (
	// HeaderTenant names the tenant a request is accounted to (fair_share,
	// quotas, per-tenant metrics).
	HeaderTenant = "X-Tenant-Id"
	// HeaderPriority is one of the Priorities.
	HeaderPriority = "X-Request-Priority"
	// HeaderDeadline is the request's SLO in whole milliseconds
	// (0 or absent: none; at most MaxDeadline).
	HeaderDeadline = "X-SLO-Deadline-Ms"
	// HeaderType labels the request for metrics (e.g. llm, embedding, rag).
	HeaderType = "X-Request-Type"
)

// Response headers of the reference stack.
const (
	// HeaderEngine names the engine that served the request.
	HeaderEngine = "X-Engine-Id"
	// HeaderRetries is "1" when the request was tried on a second engine.
	HeaderRetries = "X-Sagebench-Retries"
	// HeaderSearchDuration is the index search time of /v1/retrieve in µs.
	HeaderSearchDuration = "X-Search-Duration-Us"
	// HeaderQueueWait is how long the request waited in the gateway's
	// queue for an engine slot, in whole µs (QueueWaitValue, ParseQueueWait).
	HeaderQueueWait = "X-Sagebench-Queue-Us"
)

// MaxDeadline is the largest deadline HeaderDeadline carries.
const MaxDeadline = 24 * time.Hour

// Priority names, most urgent first.
const (
	PriorityCritical   = "critical"
	PriorityHigh       = "high"
	PriorityNormal     = "normal"
	PriorityLow        = "low"
	PriorityBackground = "background"
)

// Priorities lists the priority names, most urgent first.
func Priorities() []string {
	return []string{PriorityCritical, PriorityHigh, PriorityNormal, PriorityLow, PriorityBackground}
}

// Scheduling policy names of the reference stack's gateway.
const (
	PolicyFIFO      = "fifo"
	PolicyPriority  = "priority"
	PolicySLOAware  = "slo_aware"
	PolicyFairShare = "fair_share"
	PolicyHybrid    = "hybrid"
	PolicyAdaptive  = "adaptive"
)

// Policies lists the scheduling policy names.
func Policies() []string {
	return []string{PolicyFIFO, PolicyPriority, PolicySLOAware, PolicyFairShare, PolicyHybrid, PolicyAdaptive}
}

// Request types the workloads send (HeaderType).
const (
	TypeLLM       = "llm"
	TypeEmbedding = "embedding"
	TypeRAG       = "rag"
	// TypeRetrieve is a Q1 pipeline's retrieve stage record.
	TypeRetrieve = "retrieve"
)

// Streams reports whether a request of type typ streams a first token:
// every type but an embedding or a retrieval. A failed one counts +∞ in
// a TTFT quantile (the one failure rule); the others have no TTFT.
func Streams(typ string) bool { return typ != TypeEmbedding && typ != TypeRetrieve }

// Paths of the OpenAI-compatible API and of the reference stack's extras.
const (
	PathChat       = "/v1/chat/completions"
	PathEmbeddings = "/v1/embeddings"
	PathModels     = "/v1/models"
	PathRetrieve   = "/v1/retrieve"
	PathHealth     = "/health"
	PathMetrics    = "/metrics"
)

// Admin API paths of the reference stack. An engine is addressed as
// PathAdminEngines + "/" + id.
const (
	PathAdminPrefix  = "/admin/"
	PathAdminPolicy  = "/admin/policy"
	PathAdminEngines = "/admin/engines"
	PathAdminMetrics = "/admin/metrics"
)

// DeadlineValue renders bound for HeaderDeadline in whole milliseconds,
// rounded up ("" for no bound): truncating would announce a tighter
// deadline, or "0" (none), for a sub-millisecond bound.
func DeadlineValue(bound time.Duration) string {
	if bound <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((bound+time.Millisecond-1)/time.Millisecond), 10)
}

// SetDeadline sets HeaderDeadline on h when bound > 0.
func SetDeadline(h http.Header, bound time.Duration) {
	if v := DeadlineValue(bound); v != "" {
		h.Set(HeaderDeadline, v)
	}
}

// QueueWaitValue renders d for HeaderQueueWait in whole microseconds.
func QueueWaitValue(d time.Duration) string {
	return strconv.FormatInt(max(int64(d/time.Microsecond), 0), 10)
}

// ParseQueueWait reads a HeaderQueueWait value; ok is false when it is
// absent or not a non-negative whole number.
func ParseQueueWait(v string) (d time.Duration, ok bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > int64(MaxDeadline/time.Microsecond) {
		return 0, false
	}
	return time.Duration(n) * time.Microsecond, true
}
