package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/redact"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// CheckTimeout bounds the reachability check of Open.
const CheckTimeout = 5 * time.Second

// UnreachableError says the target did not answer its health check.
type UnreachableError struct {
	URL string // secret-free
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("target %s is unreachable (%v); start it or fix --target", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Options are the process-level inputs of Open.
type Options struct {
	Start     Starter // starts the embedded stack; nil when the build has none
	Seed      int64   // seed of the embedded stack's engines
	StackYAML []byte  // the workload's default stack (Config.StackConfig wins)
	// Models are the models the workload will ask for (workload.Models):
	// one the target does not list makes Open fail with an
	// *UnknownModelError before any traffic.
	Models []string
	// Tokenizer is the run's tokenizer, handed to the embedded stack.
	Tokenizer *tokenizer.Ref
	// EmbeddingTokenizer, when set, is the run's embedding tokenizer,
	// handed to the embedded stack.
	EmbeddingTokenizer *tokenizer.Ref
	// ChatTemplate is the run's chat template file, handed to the
	// embedded stack.
	ChatTemplate string
}

// DefaultAdminTokenEnv is read for the admin token when AdminTokenEnv is empty.
const DefaultAdminTokenEnv = "SAGEBENCH_ADMIN_TOKEN"

// Open resolves cfg into a Target: it starts the embedded stack with
// opts.Start or checks that the URL answers. On error nothing is left
// running.
func Open(ctx context.Context, cfg Config, opts Options) (*Target, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := cfg.APIKey()
	if err != nil {
		return nil, err
	}
	t := &Target{apiKey: key, http: &http.Client{Timeout: CheckTimeout, CheckRedirect: noRedirect}, output: cfg.outputControl()}
	if cfg.IsEmbedded() {
		start := opts.Start
		if start == nil {
			return nil, errors.New("the embedded reference stack is not in this build; use --target http://host:port")
		}
		base, stop, err := start(ctx, StackSpec{Path: cfg.StackConfig, YAML: opts.StackYAML, Seed: opts.Seed, Attach: t.attach,
			Tokenizer: opts.Tokenizer, EmbeddingTokenizer: opts.EmbeddingTokenizer, ChatTemplate: opts.ChatTemplate})
		if err != nil {
			return nil, fmt.Errorf("starting the embedded reference stack: %w", err)
		}
		t.base, t.stop, t.embedded = BaseURL(base), stop, true
		t.desc = "embedded reference stack at " + t.base
	} else {
		t.base = BaseURL(cfg.URL)
		t.desc = Describe(t.base)
		if t.admin, err = cfg.adminToken(); err != nil {
			return nil, err
		}
	}
	t.redactor = redact.New(t.apiKey, t.admin)
	cc := cfg.clientConfig(t.base)
	cc.Secrets = []string{t.admin} // a target may echo either credential in any answer
	if t.client, err = openai.NewClient(cc); err == nil {
		err = t.Check(ctx)
	}
	if err == nil {
		err = t.CheckModels(ctx, opts.Models)
	}
	if err != nil {
		t.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return t, nil
}

// Check asks GET /v1/models, then GET /health; any 2xx answer is enough.
func (t *Target) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	var msgs []string
	var last error
	for _, path := range []string{"/v1/models", "/health"} {
		err := t.get(ctx, path)
		if err == nil {
			return nil
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("GET %s: %w", path, ue.Err)
		}
		msgs, last = append(msgs, err.Error()), err
	}
	return &UnreachableError{URL: t.desc, Err: fmt.Errorf("%s; %w", strings.Join(msgs[:len(msgs)-1], "; "), last)}
}

func (t *Target) get(ctx context.Context, path string) error {
	resp, err := t.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return nil
}

func (t *Target) do(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, body)
	if err != nil {
		return nil, err
	}
	if body != nil || method != http.MethodGet {
		// the admin API refuses a POST or DELETE of any other type (a web
		// page's form or text/plain), even one without a body
		req.Header.Set("Content-Type", "application/json")
	}
	// The admin API gets the admin token only: the API key is a
	// credential for the inference API, not for whoever answers /admin.
	switch {
	case strings.HasPrefix(path, "/admin/"):
		if t.admin != "" {
			req.Header.Set("Authorization", "Bearer "+t.admin)
		}
	case t.apiKey != "":
		req.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	return t.http.Do(req)
}

// noRedirect keeps a client that carries a credential from following a
// redirect: the 3xx is the answer (a non-2xx, hence an error), and the
// credential never reaches another origin, port or path.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Redactor is the redaction rule for strings that came from this target
// (error bodies, admin messages): it knows the API key and the admin
// token. Apply it to anything target-originated before a record, a note,
// a log line or the terminal.
// A nil Target's is the rule without secrets.
func (t *Target) Redactor() *redact.Redactor {
	if t == nil {
		return nil
	}
	return t.redactor
}

// adminToken reads the admin API token of a URL target.
func (c Config) adminToken() (string, error) {
	if c.AdminTokenEnv == "" {
		return os.Getenv(DefaultAdminTokenEnv), nil
	}
	v := os.Getenv(c.AdminTokenEnv)
	if v == "" {
		return "", fmt.Errorf("target.admin_token_env names %s, which is not set; export it or remove admin_token_env", c.AdminTokenEnv)
	}
	return v, nil
}

// APIKey returns the bearer token for requests ("" when none). It must
// never be written to a record.
func (t *Target) APIKey() string { return t.apiKey }
