package sim

// outputWords is the fixed vocabulary generated tokens are drawn from. Every
// word is at most 8 runes, so each generated token counts as exactly one
// token for CountTokens.
var outputWords = [...]string{
	"the", "of", "and", "to", "in", "a", "is", "that", "for", "it",
	"as", "was", "with", "be", "by", "on", "not", "he", "this", "are",
	"or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
	"you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
	"been", "if", "more", "when", "will", "would", "who", "so", "no", "she",
	"other", "its", "may", "these", "what", "them", "than", "some", "him", "time",
	"into", "only", "do", "could", "new", "about", "two", "first", "then", "also",
	"any", "like", "our", "my", "should", "made", "well", "such", "very", "over",
	"model", "system", "request", "token", "server", "latency", "queue", "batch", "engine", "memory",
	"cache", "vector", "index", "query", "answer", "result", "data", "value", "order", "state",
	"stream", "client", "network", "process", "thread", "signal", "event", "record", "table", "field",
	"point", "graph", "layer", "weight", "input", "output", "source", "target", "limit", "budget",
	"policy", "tenant", "deadline", "priority", "schedule", "routing", "replica", "shard", "node", "cluster",
	"rate", "load", "burst", "window", "sample", "median", "mean", "error", "retry", "timeout",
	"prefix", "prompt", "context", "decode", "prefill", "page", "block", "slot", "step", "chunk",
	"fast", "slow", "large", "small", "early", "late", "high", "low", "long", "short",
	"simple", "stable", "steady", "heavy", "light", "clear", "exact", "honest", "careful", "robust",
	"measure", "compare", "observe", "predict", "compute", "store", "fetch", "return", "accept", "reject",
	"because", "while", "where", "after", "before", "under", "between", "without", "within", "through",
	"river", "mountain", "forest", "ocean", "desert", "valley", "island", "garden", "harbor", "bridge",
	"morning", "evening", "winter", "summer", "spring", "autumn", "season", "moment", "minute", "hour",
	"letter", "number", "answer", "question", "reason", "example", "pattern", "method", "problem", "theory",
	"light", "sound", "colour", "shape", "motion", "energy", "power", "force", "field", "wave",
	"people", "friend", "family", "teacher", "student", "doctor", "worker", "writer", "reader", "player",
	"city", "street", "house", "school", "market", "office", "station", "village", "country", "world",
	"good", "great", "little", "old", "young", "right", "big", "same", "able", "last",
}

// tokenText returns the text of token i of the generation seeded by seed:
// a vocabulary word, with a leading space after the first token.
func tokenText(seed uint64, i int) string {
	s := seed ^ (uint64(i+1) * 0x9e3779b97f4a7c15)
	k := splitmix64(&s) % uint64(len(outputWords))
	if i == 0 {
		return outputWords[k]
	}
	return spacedWords[k]
}

// spacedWords holds each output word with a leading space, so that
// producing a token never allocates. It is never written after init.
var spacedWords = func() (out [len(outputWords)]string) {
	for i, w := range outputWords {
		out[i] = " " + w
	}
	return out
}()
