package target

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/target/targettest"
)

// TestHostileTargetSuite runs every call the harness makes of a target
// (chat streamed and not, embeddings, retrieve, models, the admin policy
// API) against every hostile behaviour: each ends in an error of the
// expected class, no secret of ours is in any error text, and no
// credential follows a redirect. Bounded by the short timeouts below: the
// suite takes a few seconds.
func TestHostileTargetSuite(t *testing.T) {
	t.Setenv("SUITE_KEY", "sk-suite-KEY-31337abcdef")
	t.Setenv("SUITE_ADMIN", "adm-suite-TOKEN-777xyz")
	secrets := []string{"sk-suite-KEY-31337abcdef", "adm-suite-TOKEN-777xyz", "31337abcdef", "777xyz"}
	classes := map[string][]string{
		targettest.Garbage:  {openai.ClassMalformed},
		targettest.Truncate: {openai.ClassTruncated},
		targettest.Hang:     {openai.ClassTimeout},
		targettest.Huge:     {openai.ClassTooLarge, openai.ClassTimeout},
		targettest.Echo:     {openai.ClassHTTP5xx, openai.ClassStreamError},
		targettest.Redirect: {openai.ClassHTTP4xx},
		targettest.Reset:    {openai.ClassDropped, openai.ClassReset},
	}
	for _, mode := range targettest.HostileModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			h := targettest.NewHostile(mode)
			defer h.Close()
			ctx := context.Background()
			tg, err := Open(ctx, Config{URL: h.URL, APIKeyEnv: "SUITE_KEY", AdminTokenEnv: "SUITE_ADMIN",
				Timeout: 2 * time.Second, FirstByteTimeout: 500 * time.Millisecond}, Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer tg.Close(ctx)
			c := tg.Client()
			msgs := []openai.Message{{Role: "user", Content: "hi"}}
			for name, res := range map[string]openai.Result{
				"chat stream": c.Chat(ctx, openai.ChatRequest{Model: "m", Messages: msgs, Stream: true}),
				"chat":        c.Chat(ctx, openai.ChatRequest{Model: "m", Messages: msgs}),
				"embeddings":  c.Embed(ctx, openai.EmbedRequest{Model: "m", Input: []string{"a"}}),
				"retrieve":    c.Retrieve(ctx, openai.RetrieveRequest{Input: "q"}),
			} {
				if res.Err == nil || !slices.Contains(classes[mode], res.ErrClass) {
					t.Errorf("%s: class %q (%v), want one of %v", name, res.ErrClass, res.Err, classes[mode])
				}
				noSecret(t, name, res.Err, secrets)
			}
			_, err = c.Models(ctx)
			noSecret(t, "models", err, secrets)
			actx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			// A 2xx POST is a switch, whatever its body; reading the
			// policy back must then fail as a tool error.
			err = tg.SetPolicy(actx, "edf")
			var ae *AdminError
			if err != nil && !errors.As(err, &ae) {
				t.Errorf("SetPolicy: %v, want nil or an *AdminError (a tool error)", err)
			}
			noSecret(t, "SetPolicy", err, secrets)
			_, err = tg.Policy(actx)
			if !errors.As(err, &ae) {
				t.Errorf("Policy: %v, want an *AdminError (a tool error)", err)
			}
			noSecret(t, "Policy", err, secrets)
			if s := h.Stolen(); len(s) > 0 {
				t.Errorf("requests followed a redirect: %q", s)
			}
		})
	}
}

func noSecret(t *testing.T, what string, err error, secrets []string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%s: error leaks %q: %v", what, s, err)
		}
	}
}
