package sim

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/profile"
)

// fastLLM is a real-clock profile with sub-millisecond steps.
func fastLLM() profile.LLM {
	p := testLLM()
	p.MaxNumSeqs, p.MaxWaiting, p.KVCacheTokens = 64, 512, 1<<20
	p.StepBase, p.StepPerSeq, p.PrefillPerToken = 200*time.Microsecond, time.Microsecond, time.Microsecond
	p.Jitter = 0.2
	p.PrefixCache = true
	return p
}

// TestConcurrentClientsOnWallClock runs many clients, some of which give up
// early, against one engine on the real clock: every stream must end with
// io.EOF (or the client's own Close) and the engine must end empty.
func TestConcurrentClientsOnWallClock(t *testing.T) {
	e := NewLLM("wall", fastLLM(), Options{Seed: 9})
	defer e.Close()
	const clients = 200
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runClient(e, i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	waitFor(t, func() bool {
		l := e.Load()
		return l.Running == 0 && l.Waiting == 0 && l.KVUsed == 0
	})
	if st := e.Stats(); st.Completed+st.Cancelled != clients {
		t.Errorf("Stats() = %+v: completed+cancelled != %d", st, clients)
	}
}

func runClient(e *LLM, i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := e.Generate(ctx, engine.ChatRequest{Prompt: words("shared", 20) + words("p", i%13), MaxTokens: 5 + i%20})
	if err != nil {
		return err
	}
	defer s.Close()
	for n := 0; ; n++ {
		if i%10 == 0 && n == 2 {
			return nil // walks away mid-stream
		}
		_, err := s.Recv(ctx)
		if errors.Is(err, io.EOF) {
			if s.Usage().CompletionTokens != n {
				return errors.New("usage disagrees with tokens received")
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}
