package targettest_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/target/targettest"
)

// TestSlotsCapacity: 12 chats sent at once to one engine of 3 slots
// held 50 ms each take at least 4 rounds of 50 ms, no more than 6 of
// them wait 100 ms or more (3 slots a round), and an engine added
// through the admin API doubles the capacity.
func TestSlotsCapacity(t *testing.T) {
	s := targettest.NewSlots(t, targettest.SlotsConfig{Slots: 3, Service: 50 * time.Millisecond, QueueHeader: true})
	if c := s.Capacity(); c != 60 {
		t.Fatalf("capacity %v, want 60 chats/s", c)
	}
	var mu sync.Mutex
	var waits []string
	var wg sync.WaitGroup
	start := time.Now()
	for range 12 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+"/v1/chat/completions", strings.NewReader(`{"stream":false}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			waits = append(waits, resp.Header.Get("X-Sagebench-Queue-Us"))
			mu.Unlock()
		})
	}
	wg.Wait()
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("12 chats on 3 slots of 50 ms took %v: faster than the capacity allows", el)
	}
	long := 0
	for _, w := range waits {
		if len(w) >= 6 { // ≥ 100 ms, in µs
			long++
		}
	}
	if long > 6 {
		t.Errorf("queue waits %v: more than 6 of 12 waited ≥ 100 ms on 3 slots of 50 ms", waits)
	}
	resp, err := http.Post(s.URL+"/admin/engines", "application/json", strings.NewReader(`{"kind":"llm"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := s.Capacity(); c != 120 {
		t.Errorf("capacity after adding an engine %v, want 120", c)
	}
}
