package gateway

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/sched"
)

// TestContentionFollowsPolicy fills the only slot, queues requests, then
// frees the slot: the engine must receive them in the policy's order.
func TestContentionFollowsPolicy(t *testing.T) {
	cases := []struct {
		policy string
		want   []string
	}{
		{sched.FIFO, []string{"blocker", "bg", "norm", "crit", "high"}},
		{sched.Prio, []string{"blocker", "crit", "high", "norm", "bg"}},
	}
	queued := []struct{ name, prio string }{{"bg", "background"}, {"norm", "normal"}, {"crit", "critical"}, {"high", "high"}}
	for _, tc := range cases {
		t.Run(tc.policy, func(t *testing.T) {
			llm := newFakeLLM("e1", 1)
			hold := make(chan struct{})
			llm.hold = hold
			h := newHarness(t, Config{Policy: tc.policy}, map[string]Member{"e1": {LLM: llm}})
			var wg sync.WaitGroup
			send := func(name, prio string) {
				defer wg.Done()
				r := h.do("POST", "/v1/chat/completions", chatBody(name, 1, false), map[string]string{"X-Request-Priority": prio})
				if r.status != 200 {
					t.Errorf("%s: %d %s", name, r.status, r.body)
				}
			}
			wg.Add(1)
			go send("blocker", "normal")
			waitFor(t, "blocker to start", func() bool { return len(llm.order()) == 1 })
			for i, q := range queued {
				wg.Add(1)
				go send(q.name, q.prio)
				waitFor(t, "request queued", func() bool { return h.queued(engine.KindLLM) == i+1 })
			}
			close(hold)
			wg.Wait()
			if got := llm.order(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("engine saw %v, want %v", got, tc.want)
			}
			if llm.maxSeen > 1 {
				t.Errorf("engine ran %d requests at once with 1 slot", llm.maxSeen)
			}
		})
	}
}

func TestRetryOnAnotherEngine(t *testing.T) {
	bad, good := newFakeLLM("a-bad", 4), newFakeLLM("b-good", 4)
	bad.failGen = fmt.Errorf("%w: connection refused", engine.ErrClosed)
	bad.set(func(f *fakeLLM) {}) // both free: routing picks bad first (fastest)
	h := newHarness(t, Config{}, map[string]Member{"a-bad": {LLM: bad, Speed: time.Millisecond}, "b-good": {LLM: good, Speed: time.Second}})
	for _, stream := range []bool{false, true} {
		r := h.do("POST", "/v1/chat/completions", chatBody("x", 2, stream), map[string]string{"X-Request-Priority": "critical"})
		if r.status != 200 || r.header.Get("X-Engine-Id") != "b-good" {
			t.Fatalf("stream=%v: %d engine %q: %s", stream, r.status, r.header.Get("X-Engine-Id"), r.body)
		}
		if stream == false && r.header.Get("X-Sagebench-Retries") != "1" {
			t.Errorf("first request: X-Sagebench-Retries %q, want 1", r.header.Get("X-Sagebench-Retries"))
		}
	}
	// ErrClosed ejects at once: the second request went straight to b-good.
	if st := stateOf(h, "a-bad"); st != "ejected" {
		t.Errorf("a-bad state %q, want ejected", st)
	}
}

func TestFailureWithoutAlternativeIsExplicit(t *testing.T) {
	bad := newFakeLLM("only", 4)
	bad.failGen = errBoom
	h := newHarness(t, Config{EjectAfter: 100}, map[string]Member{"only": {LLM: bad}})
	r := h.do("POST", "/v1/chat/completions", chatBody("x", 2, false), nil)
	if r.status != http.StatusBadGateway || !strings.Contains(string(r.body), "boom") {
		t.Fatalf("got %d %s, want 502 naming the engine error", r.status, r.body)
	}
	// It was tried twice; the record must say so on the error too.
	if got := r.header.Get("X-Sagebench-Retries"); got != "1" {
		t.Errorf("X-Sagebench-Retries %q on the failed retry, want 1", got)
	}
	emb := &fakeEmbedder{id: "emb", model: "m-emb", slots: 1, fail: errBoom}
	h = newHarness(t, Config{EjectAfter: 100}, map[string]Member{"emb": {Embedder: emb}})
	r = h.do("POST", "/v1/embeddings", `{"input":"x"}`, nil)
	if r.status != http.StatusBadGateway || r.header.Get("X-Sagebench-Retries") != "1" {
		t.Errorf("embedding: %d retries %q, want 502 with X-Sagebench-Retries 1", r.status, r.header.Get("X-Sagebench-Retries"))
	}
}

func stateOf(h *harness, id string) string {
	for _, e := range h.g.Engines() {
		if e.ID == id {
			return e.State
		}
	}
	return ""
}

func TestEjectionAndReadmission(t *testing.T) {
	flaky := newFakeLLM("flaky", 4)
	flaky.failGen = errBoom
	h := newHarness(t, Config{EjectAfter: 2, HealthInterval: 10 * time.Millisecond}, map[string]Member{"flaky": {LLM: flaky}})
	for i := 0; i < 2; i++ {
		h.do("POST", "/v1/chat/completions", chatBody("x", 1, false), nil)
	}
	// The health probe also fails while failGen is set, so it stays out.
	waitFor(t, "ejection", func() bool { return stateOf(h, "flaky") == "ejected" })
	r := h.do("POST", "/v1/chat/completions", chatBody("x", 1, false), nil)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("with every engine ejected: %d %s, want 503 with Retry-After", r.status, r.body)
	}
	if r := h.do("GET", "/health", "", nil); r.status != http.StatusServiceUnavailable {
		t.Errorf("/health %d with no healthy engine", r.status)
	}
	flaky.set(func(f *fakeLLM) { f.failGen = nil })
	waitFor(t, "re-admission", func() bool { return stateOf(h, "flaky") == "active" })
	if r := h.do("POST", "/v1/chat/completions", chatBody("x", 1, false), nil); r.status != 200 {
		t.Fatalf("after re-admission: %d %s", r.status, r.body)
	}
}

func TestQuotaRejectsWith429(t *testing.T) {
	llm := newFakeLLM("e1", 8)
	hold := make(chan struct{})
	llm.hold = hold
	q := sched.NewQuotas(sched.Quota{}, map[string]sched.Quota{"small": {MaxConcurrent: 1}})
	h := newHarness(t, Config{Quotas: q}, map[string]Member{"e1": {LLM: llm}})
	done := make(chan reply)
	go func() {
		done <- h.do("POST", "/v1/chat/completions", chatBody("first", 1, false), map[string]string{"X-Tenant-Id": "small"})
	}()
	waitFor(t, "first request running", func() bool { return len(llm.order()) == 1 })
	r := h.do("POST", "/v1/chat/completions", chatBody("second", 1, false), map[string]string{"X-Tenant-Id": "small"})
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("over quota: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	if !strings.Contains(string(r.body), "rate_limit_error") {
		t.Errorf("429 body %s", r.body)
	}
	other := make(chan reply)
	go func() {
		other <- h.do("POST", "/v1/chat/completions", chatBody("other", 1, false), map[string]string{"X-Tenant-Id": "other"})
	}()
	close(hold)
	if r := <-done; r.status != 200 {
		t.Errorf("first: %d", r.status)
	}
	if r := <-other; r.status != 200 {
		t.Errorf("another tenant was refused: %d %s", r.status, r.body)
	}
}

// TestPolicySwitchUnderLoad switches policies while requests flow: every
// request must complete.
func TestPolicySwitchUnderLoad(t *testing.T) {
	a, b := newFakeLLM("a", 3), newFakeLLM("b", 2)
	a.delay, b.delay = 200*time.Microsecond, 300*time.Microsecond
	emb := &fakeEmbedder{id: "emb", model: "m-emb", slots: 2}
	h := newHarness(t, Config{}, map[string]Member{"a": {LLM: a}, "b": {LLM: b}, "emb": {Embedder: emb}})
	const n = 240
	prios := []string{"critical", "high", "normal", "low", "background"}
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			hdr := map[string]string{"X-Request-Priority": prios[i%5], "X-Tenant-Id": fmt.Sprintf("t%d", i%3), "X-SLO-Deadline-Ms": fmt.Sprint(50 + i%200)}
			var r reply
			if i%4 == 0 {
				r = h.do("POST", "/v1/embeddings", `{"model":"m-emb","input":["q"]}`, hdr)
			} else {
				r = h.do("POST", "/v1/chat/completions", chatBody("x", 5, i%2 == 0), hdr)
			}
			if r.status != 200 {
				errs <- fmt.Sprintf("request %d: %d %s", i, r.status, r.body)
			}
		}(i)
	}
	stop := make(chan struct{})
	switched := make(chan int)
	go func() {
		k := 0
		for {
			select {
			case <-stop:
				switched <- k
				return
			default:
			}
			name := sched.Names()[k%len(sched.Names())]
			if r := h.do("POST", "/admin/policy", `{"policy":"`+name+`"}`, nil); r.status != 200 {
				errs <- fmt.Sprintf("switch to %s: %d %s", name, r.status, r.body)
			}
			k++
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	close(stop)
	k := <-switched
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if k < 3 {
		t.Errorf("only %d policy switches happened during the load", k)
	}
	if q := h.queued(engine.KindLLM); q != 0 {
		t.Errorf("%d requests left queued", q)
	}
}

func TestDrainAndRemove(t *testing.T) {
	a, b := newFakeLLM("a", 4), newFakeLLM("b", 4)
	hold := make(chan struct{})
	a.hold = hold
	h := newHarness(t, Config{}, map[string]Member{"a": {LLM: a, Speed: time.Millisecond}, "b": {LLM: b, Speed: time.Second}})
	inflight := make(chan reply)
	go func() {
		inflight <- h.do("POST", "/v1/chat/completions", chatBody("on-a", 1, false), map[string]string{"X-Request-Priority": "critical"})
	}()
	waitFor(t, "request on a", func() bool { return len(a.order()) == 1 })
	drained := make(chan reply)
	go func() { drained <- h.do("POST", "/admin/engines/a/drain", "", nil) }()
	waitFor(t, "draining", func() bool { return stateOf(h, "a") == "draining" })
	// New work goes to b while a drains.
	if r := h.do("POST", "/v1/chat/completions", chatBody("new", 1, false), map[string]string{"X-Request-Priority": "critical"}); r.header.Get("X-Engine-Id") != "b" {
		t.Fatalf("new request during drain went to %q", r.header.Get("X-Engine-Id"))
	}
	select {
	case r := <-drained:
		t.Fatalf("drain returned before in-flight work finished: %d %s", r.status, r.body)
	case <-time.After(20 * time.Millisecond):
	}
	close(hold)
	if r := <-inflight; r.status != 200 {
		t.Fatalf("in-flight request on the draining engine: %d %s", r.status, r.body)
	}
	if r := <-drained; r.status != 200 || !strings.Contains(string(r.body), `"drained"`) {
		t.Fatalf("drain: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/admin/engines/a", "", nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/admin/engines/a", "", nil); r.status != 404 {
		t.Fatalf("second delete: %d %s", r.status, r.body)
	}
	if stateOf(h, "a") != "" {
		t.Fatal("removed engine still listed")
	}
}

func TestAdminTokenAndAdd(t *testing.T) {
	added := newFakeLLM("new", 2)
	factory := func(_ context.Context, spec EngineSpec) (Member, error) {
		if spec.Profile != "known" {
			return Member{}, fmt.Errorf("unknown profile %q", spec.Profile)
		}
		return Member{LLM: added, Profile: spec.Profile}, nil
	}
	h := newHarness(t, Config{AdminToken: "s3cret", Factory: factory}, map[string]Member{"e1": {LLM: newFakeLLM("e1", 1)}})
	if r := h.do("GET", "/admin/engines", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("no token: %d", r.status)
	}
	if r := h.do("GET", "/admin/engines", "", map[string]string{"Authorization": "Bearer wrong"}); r.status != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", r.status)
	}
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	if r := h.do("POST", "/admin/engines", `{"id":"new","kind":"llm","profile":"unknown"}`, auth); r.status != 400 {
		t.Fatalf("unknown profile: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/admin/engines", `{"id":"new","kind":"llm","profile":"known"}`, auth); r.status != 201 {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/admin/engines", `{"id":"new","kind":"llm","profile":"known"}`, auth); r.status != 409 {
		t.Fatalf("duplicate add: %d %s", r.status, r.body)
	}
	r := h.do("GET", "/admin/metrics", "", auth)
	if r.status != 200 || !strings.Contains(string(r.body), `"id":"new"`) || !strings.Contains(string(r.body), `"queued"`) {
		t.Fatalf("admin metrics: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/admin/policy", "", auth); !strings.Contains(string(r.body), `"fifo"`) {
		t.Fatalf("policy: %s", r.body)
	}
	// The API itself needs no token.
	if r := h.do("POST", "/v1/chat/completions", chatBody("x", 1, false), nil); r.status != 200 {
		t.Fatalf("chat: %d", r.status)
	}
}

func TestClientDisconnectFreesSlot(t *testing.T) {
	llm := newFakeLLM("e1", 1)
	llm.delay = 50 * time.Millisecond
	h := newHarness(t, Config{}, map[string]Member{"e1": {LLM: llm}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		h.doCtx(ctx, "POST", "/v1/chat/completions", chatBody("long", 10000, true), nil)
		close(done)
	}()
	waitFor(t, "stream running", func() bool { return len(llm.order()) == 1 })
	// A queued request whose client leaves must not take the slot either.
	qctx, qcancel := context.WithCancel(context.Background())
	go h.doCtx(qctx, "POST", "/v1/chat/completions", chatBody("queued-then-gone", 1, false), nil)
	waitFor(t, "second queued", func() bool { return h.queued(engine.KindLLM) == 1 })
	qcancel()
	waitFor(t, "queued request withdrawn", func() bool { return h.queued(engine.KindLLM) == 0 })
	cancel()
	<-done
	r := h.do("POST", "/v1/chat/completions", chatBody("next", 1, false), nil)
	if r.status != 200 {
		t.Fatalf("slot not freed after disconnect: %d %s", r.status, r.body)
	}
	if got := llm.order(); len(got) != 2 || got[1] != "next" {
		t.Errorf("engine saw %v, want [long next]", got)
	}
}

func TestMidStreamFailureIsAnSSEError(t *testing.T) {
	llm := newFakeLLM("e1", 1)
	llm.failMid = errBoom
	h := newHarness(t, Config{EjectAfter: 100}, map[string]Member{"e1": {LLM: llm}})
	r := h.do("POST", "/v1/chat/completions", chatBody("x", 5, true), nil)
	data, events := sseData(t, r.body)
	if r.status != 200 || len(events) != 1 || events[0] != "error" {
		t.Fatalf("status %d events %v body %s", r.status, events, r.body)
	}
	if last := data[len(data)-1]; !strings.Contains(last, "boom") || strings.Contains(string(r.body), "[DONE]") {
		t.Errorf("last data %q; want the error and no [DONE]", last)
	}
}

// TestHybridBatchesEmbeddingsByModel: under hybrid, queued embedding
// requests run as one engine call and each gets its own slice back, from
// an engine handing over parsed vectors or JSON text alike.
func TestHybridBatchesEmbeddingsByModel(t *testing.T) {
	for _, text := range []bool{false, true} {
		t.Run(map[bool]string{false: "parsed vectors", true: "vectors as text"}[text], func(t *testing.T) {
			emb := &fakeEmbedder{id: "emb", model: "m-emb", slots: 1}
			hold := make(chan struct{})
			emb.hold = hold
			m := Member{Embedder: emb}
			if text {
				m = Member{Embedder: &textFake{fakeEmbedder: emb}}
			}
			h := newHarness(t, Config{Policy: sched.Hybrid, MaxBatch: 8}, map[string]Member{"emb": m})
			hybridBatch(t, h, emb, hold)
		})
	}
}

func hybridBatch(t *testing.T, h *harness, emb *fakeEmbedder, hold chan struct{}) {
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := h.do("POST", "/v1/embeddings", fmt.Sprintf(`{"model":"m-emb","input":["%s"]}`, strings.Repeat("x", i+1)), nil)
			var got struct {
				Data []struct{ Embedding []float32 } `json:"data"`
			}
			_ = r.json(t)
			_ = jsonUnmarshal(r.body, &got)
			if r.status != 200 || len(got.Data) != 1 || got.Data[0].Embedding[0] != float32(i+1) {
				t.Errorf("request %d got %d %s", i, r.status, r.body)
			}
		}(i)
		if i < 2 { // batch size 1: two requests in flight (one running, one filling)
			waitFor(t, "call", func() bool { return len(emb.callSizes()) == i+1 })
		} else {
			waitFor(t, "queued", func() bool { return h.queued(engine.KindEmbedding) == i-1 })
		}
	}
	close(hold)
	wg.Wait()
	if got := emb.callSizes(); !reflect.DeepEqual(got, []int{1, 1, 3}) {
		t.Errorf("embed calls carried %v inputs, want [1 1 3] (one batch of the three queued)", got)
	}
}

func TestMetricsBoundTenants(t *testing.T) {
	h := newHarness(t, Config{MaxTenantLabels: 2}, map[string]Member{"e1": {LLM: newFakeLLM("e1", 4)}})
	for i := 0; i < 6; i++ {
		h.do("POST", "/v1/chat/completions", chatBody("x", 1, false), map[string]string{"X-Tenant-Id": fmt.Sprintf("tenant-%d", i)})
	}
	body := string(h.do("GET", "/metrics", "", nil).body)
	named := 0
	for i := 0; i < 6; i++ {
		if strings.Contains(body, fmt.Sprintf(`tenant="tenant-%d"`, i)) {
			named++
		}
	}
	if named != 2 || !strings.Contains(body, `tenant="other"`) {
		t.Errorf("%d named tenants (want 2) and other=%v", named, strings.Contains(body, `tenant="other"`))
	}
	for _, series := range []string{"sagebench_gateway_requests_total", "sagebench_gateway_ttft_seconds", "sagebench_gateway_queue_wait_seconds", "sagebench_engine_slots", "sagebench_gateway_queue_depth"} {
		if !strings.Contains(body, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// TestStalledEngine: an engine that goes silent (hung, SIGSTOPped) is
// detected by the stall timeout: before the first token the request is
// retried elsewhere; mid-stream it ends with an SSE error. No hang.
func TestStalledEngine(t *testing.T) {
	hung, ok := newFakeLLM("a-hung", 4), newFakeLLM("b-ok", 4)
	hung.hold = make(chan struct{}) // never released
	h := newHarness(t, Config{StallTimeout: 50 * time.Millisecond},
		map[string]Member{"a-hung": {LLM: hung, Speed: time.Millisecond}, "b-ok": {LLM: ok, Speed: time.Second}})
	r := h.do("POST", "/v1/chat/completions", chatBody("x", 2, true), map[string]string{"X-Request-Priority": "critical"})
	if r.status != 200 || r.header.Get("X-Engine-Id") != "b-ok" || r.header.Get("X-Sagebench-Retries") != "1" {
		t.Fatalf("before first token: %d engine %q retries %q: %s", r.status, r.header.Get("X-Engine-Id"), r.header.Get("X-Sagebench-Retries"), r.body)
	}
	if st := stateOf(h, "a-hung"); st != "ejected" {
		t.Errorf("stalled engine state %q, want ejected", st)
	}
	ok.set(func(f *fakeLLM) { f.delay = time.Hour }) // first token, then silence
	r = h.do("POST", "/v1/chat/completions", chatBody("y", 5, true), nil)
	if _, events := sseData(t, r.body); r.status != 200 || len(events) != 1 || !strings.Contains(string(r.body), "stall") {
		t.Fatalf("mid-stream stall: %d %s", r.status, r.body)
	}
}

// TestBatchedEmbeddingRetriesElsewhere: a gateway-side embedding batch
// whose engine fails is retried once on another engine, like a single
// request, and each retried response says so in X-Sagebench-Retries.
func TestBatchedEmbeddingRetriesElsewhere(t *testing.T) {
	holdBad, holdGood := make(chan struct{}), make(chan struct{})
	bad := &fakeEmbedder{id: "a-bad", model: "m-emb", slots: 1, hold: holdBad}
	good := &fakeEmbedder{id: "b-good", model: "m-emb", slots: 1, hold: holdGood}
	h := newHarness(t, Config{Policy: sched.FIFO, MaxBatch: 8, EjectAfter: 100},
		map[string]Member{"a-bad": {Embedder: bad, Speed: time.Millisecond}, "b-good": {Embedder: good, Speed: time.Second}})
	type result struct {
		status  int
		engine  string
		retries string
	}
	results := make([]result, 6)
	var wg sync.WaitGroup
	send := func(i int) {
		defer wg.Done()
		r := h.do("POST", "/v1/embeddings", fmt.Sprintf(`{"model":"m-emb","input":"r%d"}`, i), nil)
		results[i] = result{r.status, r.header.Get("X-Engine-Id"), r.header.Get("X-Sagebench-Retries")}
	}
	for i := 0; i < 4; i++ { // fill both engines' two gateway slots each
		wg.Add(1)
		go send(i)
		waitFor(t, "call", func() bool { return len(bad.callSizes())+len(good.callSizes()) == i+1 })
	}
	for i := 4; i < 6; i++ { // these two queue and leave as one batch
		wg.Add(1)
		go send(i)
		waitFor(t, "queued", func() bool { return h.queued(engine.KindEmbedding) == i-3 })
	}
	bad.mu.Lock()
	bad.fail = errBoom
	bad.mu.Unlock()
	close(holdBad) // a-bad fails its two calls and then the batch it takes next
	waitFor(t, "a batch on a-bad", func() bool {
		for _, n := range bad.callSizes() {
			if n == 2 {
				return true
			}
		}
		return false
	})
	close(holdGood)
	wg.Wait()
	for i, r := range results {
		if r.status != 200 || r.engine != "b-good" {
			t.Errorf("request %d: status %d from %q, want 200 from b-good", i, r.status, r.engine)
		}
		// Routing put 0 and 2 on a-bad, 1 and 3 on b-good; 4 and 5 rode the batch.
		if wantRetried := i != 1 && i != 3; wantRetried != (r.retries == "1") {
			t.Errorf("request %d: X-Sagebench-Retries %q, want retried=%v", i, r.retries, wantRetried)
		}
	}
}

// TestPolicyOrdersEachModel: with engines of two models, requests waiting
// for a busy model's engine are still dispatched in the policy's order
// while the other model's engine is free.
func TestPolicyOrdersEachModel(t *testing.T) {
	busy, idle := newFakeLLM("x", 1), newFakeLLM("y", 1)
	busy.model, idle.model = "m-x", "m-y"
	hold := make(chan struct{})
	busy.hold = hold
	h := newHarness(t, Config{Policy: sched.Prio}, map[string]Member{"x": {LLM: busy}, "y": {LLM: idle}})
	var wg sync.WaitGroup
	send := func(name, prio string) {
		defer wg.Done()
		body := fmt.Sprintf(`{"model":"m-x","max_tokens":1,"messages":[{"role":"user","content":%q}]}`, name)
		if r := h.do("POST", "/v1/chat/completions", body, map[string]string{"X-Request-Priority": prio}); r.status != 200 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	wg.Add(1)
	go send("blocker", "normal")
	waitFor(t, "blocker to start", func() bool { return len(busy.order()) == 1 })
	for i, q := range []struct{ name, prio string }{{"bg", "background"}, {"norm", "normal"}, {"crit", "critical"}} {
		wg.Add(1)
		go send(q.name, q.prio)
		waitFor(t, "request queued", func() bool { return h.queued(engine.KindLLM) == i+1 })
	}
	close(hold)
	wg.Wait()
	if got, want := busy.order(), []string{"blocker", "crit", "norm", "bg"}; !reflect.DeepEqual(got, want) {
		t.Errorf("engine x saw %v, want %v", got, want)
	}
}

// TestQueuedBehindBusyEngineIsNotAStall: a request that waits inside an
// engine (its KV or batch is full) longer than the stall timeout while the
// engine keeps streaming other requests is not a stall: it is served, and
// the engine is not ejected.
func TestQueuedBehindBusyEngineIsNotAStall(t *testing.T) {
	llm := newFakeLLM("e1", 4)
	llm.delay = 5 * time.Millisecond
	h := newHarness(t, Config{StallTimeout: 150 * time.Millisecond, EjectAfter: 1}, map[string]Member{"e1": {LLM: llm}})
	busy := make(chan reply, 1)
	go func() { busy <- h.do("POST", "/v1/chat/completions", chatBody("busy", 400, true), nil) }()
	waitFor(t, "busy stream", func() bool { return len(llm.order()) == 1 })
	hold := make(chan struct{})
	llm.set(func(f *fakeLLM) { f.hold = hold }) // the next request waits for its first token
	waiting := make(chan reply, 1)
	go func() { waiting <- h.do("POST", "/v1/chat/completions", chatBody("waiting", 2, false), nil) }()
	waitFor(t, "waiting request", func() bool { return len(llm.order()) == 2 })
	time.Sleep(600 * time.Millisecond) // four stall timeouts of waiting while e1 streams
	close(hold)
	if r := <-waiting; r.status != 200 || r.header.Get("X-Sagebench-Retries") != "" {
		t.Errorf("waiting request: %d retries %q: %s", r.status, r.header.Get("X-Sagebench-Retries"), r.body)
	}
	if r := <-busy; r.status != 200 || strings.Contains(string(r.body), "error") {
		t.Errorf("busy stream: %d %s", r.status, r.body)
	}
	if st := stateOf(h, "e1"); st != "active" {
		t.Errorf("e1 state %q, want active", st)
	}
}
