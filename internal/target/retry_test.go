package target

import (
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/sagebench/sagebench/internal/openai"
)

// TestRetryConfig: target.retry in YAML reaches the client's config, and
// a bad policy is refused by Validate naming the field.
func TestRetryConfig(t *testing.T) {
	var c Config
	src := "url: http://127.0.0.1:9\nretry:\n  max_attempts: 3\n  backoff: {base: 10ms, max: 1s, jitter: 0.2}\n  on: [connect, 5xx, 429, timeout]\n  budget: 0.1\n  hedge_after: 2s\n"
	if err := yaml.UnmarshalWithOptions([]byte(src), &c, yaml.Strict()); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got := c.clientConfig(c.URL).Retry
	if got.MaxAttempts != 3 || got.Backoff.Jitter != 0.2 || len(got.On) != 4 || got.Budget != 0.1 || got.HedgeAfter.Seconds() != 2 {
		t.Errorf("client retry policy %+v", got)
	}
	c.Retry = &openai.RetryPolicy{MaxAttempts: 3, On: []string{"4xx"}}
	if err := c.Validate(); err == nil {
		t.Error("retry.on: [4xx] accepted")
	}
	if (Config{}).clientConfig("http://x").Retry.Enabled() {
		t.Error("no retry policy configured, but the client retries")
	}
}
