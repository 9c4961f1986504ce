package q1_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/cli"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/target/targettest"
	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

// q1Loose keeps validity out of the way: these tests check records and
// behaviour, not the timing of a loaded test machine.
const q1Loose = `
validity: {max_lag_p99_ms: 60000, min_delivered_ratio: 0.01}
`

// q1Tiny is 20 transactions at 40 tx/s on the runtime with serialisation
// on, short generations and a small corpus.
const q1Tiny = q1Loose + `
q1:
  schedule: {process: poisson, rate: 40, count: 20}
  llm: {model: meta-llama/Llama-3.1-8B-Instruct, max_tokens: 8}
  index: {size: 300}
  serialize: true
`

type q1Result struct {
	code           int
	stdout, stderr string
	dir            string // the run directory ("" when none)
	run            record.Run
	reqs           []record.Request
}

// runQ1 runs `sagebench run -e Q1` in-process with config body and args.
func runQ1(t *testing.T, body string, args ...string) q1Result {
	t.Helper()
	return runQ1Within(t, 45*time.Second, body, args...)
}

// runQ1Within is runQ1 with the run's context cancelled after d (Ctrl-C).
func runQ1Within(t *testing.T, d time.Duration, body string, args ...string) q1Result {
	t.Helper()
	r := workloadtest.Run(t, d, "Q1", body, args...)
	res := q1Result{code: r.Code, stdout: r.Stdout, stderr: r.Stderr}
	if len(r.Dirs) == 1 {
		res.dir, res.run = r.Dirs[0], r.Runs[0]
		res.reqs = readJSONL(t, filepath.Join(res.dir, "requests.jsonl"))
	}
	return res
}

func readJSONL(t *testing.T, path string) []record.Request {
	t.Helper()
	var out []record.Request
	if err := record.ReadRequestsFile(path, func(_ int, r record.Request) { out = append(out, r) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// byTxn groups records by transaction: the txn record and its stages.
func byTxn(t *testing.T, reqs []record.Request) (map[string]record.Request, map[string][]record.Request) {
	t.Helper()
	txns, stages := map[string]record.Request{}, map[string][]record.Request{}
	for _, r := range reqs {
		switch r.Kind {
		case "txn":
			if r.Type != "rag" || r.TxnID != r.ID {
				t.Errorf("txn record %+v: want type rag and txn_id = id", r)
			}
			if _, dup := txns[r.ID]; dup {
				t.Errorf("transaction %s recorded twice", r.ID)
			}
			txns[r.ID] = r
		case "stage":
			stages[r.TxnID] = append(stages[r.TxnID], r)
		default:
			t.Errorf("record of kind %q: %+v", r.Kind, r)
		}
	}
	return txns, stages
}

func TestQ1EmbeddedStack(t *testing.T) {
	res := runQ1(t, q1Tiny, "--parallelism", "8")
	if res.code != cli.ExitOK || res.dir == "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	txns, stages := byTxn(t, res.reqs)
	if len(txns) != 20 {
		t.Fatalf("%d transaction records, want 20", len(txns))
	}
	for id, tx := range txns {
		st := stages[id]
		if !tx.OK || len(st) != 3 {
			t.Fatalf("%s: ok=%v error=%q with %d stage records", id, tx.OK, tx.Error, len(st))
		}
		var sum float64
		for i, want := range []string{"embed", "retrieve", "generate"} {
			if st[i].Stage != want || !st[i].OK || st[i].E2EMs <= 0 {
				t.Errorf("%s stage %d: %+v", id, i, st[i])
			}
			sum += st[i].E2EMs
		}
		if tx.E2EMs < sum || tx.TTFTMs <= 0 || tx.OutputTok != 8 || len(tx.TokenNS) == 0 {
			t.Errorf("%s: e2e %.2f ms < stages %.2f ms, or no tokens: %+v", id, tx.E2EMs, sum, tx)
		}
		// The intended prompt length, counted in the run's tokenizer, is
		// what the reference stack (same tokenizer, no chat template)
		// reports as prompt_tokens, on the transaction and its generate
		// stage; the output length is max_tokens.
		for _, r := range []record.Request{tx, st[2]} {
			if r.InputTokens < 20 || r.InputTokens != r.PromptTok || r.OutputTokens != 8 {
				t.Errorf("%s: input_tokens %d, prompt_tokens %d, output_tokens %d; want input = prompt (a prompt of passages) and output 8", r.ID, r.InputTokens, r.PromptTok, r.OutputTokens)
			}
		}
		// The embed stage carries the question's length: q1.question_tokens.
		if st[0].InputTokens != 24 {
			t.Errorf("%s: input_tokens %d, want the default question_tokens 24", st[0].ID, st[0].InputTokens)
		}
	}
	x := map[string]result.Metric{}
	for _, k := range []string{"stage_embed_p50_ms", "stage_retrieve_queue_p99_ms", "stage_generate_share", "runtime_overhead_share", "recall_at_k", "source_doc_retrieved"} {
		m, ok := res.run.Result.Lookup(k)
		if !ok || !m.Measured() {
			t.Errorf("result lacks a measured %s: %+v", k, m)
		}
		x[k] = m
	}
	if x["recall_at_k"].Value < 0.8 || x["source_doc_retrieved"].Value < 0.8 {
		t.Errorf("recall@5 %.3f, source document retrieved %.2f: the index does not answer the corpus's questions", x["recall_at_k"].Value, x["source_doc_retrieved"].Value)
	}
	if p := res.run.Result.Primary; p.Name != "goodput" || p.Unit != "tx/s" || !p.Measured() {
		t.Errorf("primary metric %+v, want goodput in tx/s", p)
	}
	md, _ := os.ReadFile(filepath.Join(res.dir, "summary.md"))
	bench, _ := os.ReadFile(filepath.Join(res.dir, "bench.txt"))
	for name, text := range map[string]string{"stdout": res.stdout, "summary.md": string(md)} {
		for _, want := range []string{"Stage breakdown", "embed", "retrieve", "generate", "queueing p50", "share", "recall@5 "} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, text)
			}
		}
	}
	if !strings.Contains(string(bench), "BenchmarkQ1PipelineChain/backend=sage/type=rag") {
		t.Errorf("bench.txt:\n%s", bench)
	}
}

func TestQ1FailingTarget(t *testing.T) {
	srv, err := targettest.NewRAG(targettest.RAGOptions{FailEvery: 3, HangEvery: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := q1Tiny + `  graph:
    stages:
      - {name: embed, operator: embed}
      - {name: retrieve, operator: retrieve, timeout: 300ms}
      - {name: generate, operator: generate}
`
	res := runQ1(t, cfg, "--target", srv.URL)
	if res.code != cli.ExitOK || res.dir == "" {
		t.Fatalf("a failing target must not fail the run: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	txns, stages := byTxn(t, res.reqs)
	if len(txns) != 20 {
		t.Fatalf("%d transaction records, want 20 (one per transaction, failed or not)", len(txns))
	}
	classes := map[string]int{}
	for id, tx := range txns {
		st := stages[id]
		if tx.OK {
			if len(st) != 3 {
				t.Errorf("%s succeeded with %d stage records", id, len(st))
			}
			continue
		}
		classes[tx.ErrorClass]++
		last := st[len(st)-1]
		if len(st) != 2 || last.Stage != "retrieve" || last.OK || last.ErrorClass != tx.ErrorClass || tx.SLOMet {
			t.Errorf("%s failed (%s) but its stage records are %+v", id, tx.ErrorClass, st)
		}
	}
	if classes["http_5xx"] == 0 || classes["stage_timeout"] == 0 {
		t.Errorf("error classes %v: want both http_5xx (500s) and stage_timeout (hangs)", classes)
	}
	if res.run.Summary.Failed != classes["http_5xx"]+classes["stage_timeout"] {
		t.Errorf("summary failed = %d, records say %v", res.run.Summary.Failed, classes)
	}
	if !strings.Contains(res.stdout, "recall@k not measurable (the target's index is not the local corpus") {
		t.Errorf("stdout does not say recall is not measurable:\n%s", res.stdout)
	}
}

func TestQ1ParallelismIsTheStageConcurrency(t *testing.T) {
	// Each embedding is held until three are in flight (or 2 s), so with
	// --parallelism 3 the target sees exactly three at once.
	srv, err := targettest.NewRAG(targettest.RAGOptions{EmbedHold: 2 * time.Second, EmbedBarrier: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := q1Loose + `
q1:
  schedule: {process: constant, rate: 500, count: 9}
  llm: {model: m, max_tokens: 2}
`
	res := runQ1(t, cfg, "--target", srv.URL, "--parallelism", "3")
	if res.code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	workers := map[string]string{}
	for _, tbl := range res.run.Result.Tables {
		for _, row := range tbl.Rows {
			if tbl.Title == "Stage breakdown" {
				workers[row[0].Text] = row[len(row)-1].Text
			}
		}
	}
	for s, want := range map[string]int{"embed": 3, "retrieve": 3, "generate": 3 * 16} {
		if got := workers[s]; got != fmt.Sprint(want) {
			t.Errorf("deployed stage %s has parallelism %v, want %v (--parallelism 3 × width)", s, got, want)
		}
	}
	if got := srv.Peak("embeddings"); got != 3 {
		t.Errorf("the target saw %d embeddings in flight at most, want 3 (--parallelism)", got)
	}
}

func TestQ1BackpressureShowsAsLag(t *testing.T) {
	// One worker, queues of one, each embedding held 40 ms: the source
	// blocks in Submit; intended times stay the schedule's.
	srv, err := targettest.NewRAG(targettest.RAGOptions{EmbedHold: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sched := load.ScheduleConfig{Process: load.ProcessConstant, Rate: 200, Count: 10}
	cfg := `
q1:
  schedule: {process: constant, rate: 200, count: 10}
  llm: {model: m, max_tokens: 2}
  graph: {queue_capacity: 1, stages: [{name: embed, operator: embed}, {name: retrieve, operator: retrieve}, {name: generate, operator: generate}]}
`
	res := runQ1(t, cfg, "--target", srv.URL, "--parallelism", "1", "--seed", "5")
	if res.code != cli.ExitInvalidRun {
		t.Fatalf("exit %d, want %d (invalid: the schedule lag shows the backpressure)\n%s\n%s", res.code, cli.ExitInvalidRun, res.stdout, res.stderr)
	}
	s, err := load.NewSchedule(sched, 5)
	if err != nil {
		t.Fatal(err)
	}
	txns, _ := byTxn(t, res.reqs)
	first, maxLag := txns["txn-000000"].IntendedNS, 0.0
	for i, off := range s.Offsets {
		tx := txns[txnID(i)]
		if got, want := time.Duration(tx.IntendedNS-first), off-s.Offsets[0]; got != want {
			t.Errorf("txn %d intended at +%s, schedule says +%s", i, got, want)
		}
		maxLag = max(maxLag, tx.LagMs)
	}
	// 10 embeddings of ≥ 40 ms one at a time, 4 slots in the graph: the
	// last arrival cannot be accepted before ~5 × 40 ms after its time.
	if maxLag < 100 {
		t.Errorf("max schedule lag %.1f ms: backpressure did not reach the source", maxLag)
	}
}

func txnID(i int) string { return fmt.Sprintf("txn-%06d", i) }

func TestQ1BadGraphExits2(t *testing.T) {
	tests := []struct {
		name, graph, want string
	}{
		{"unknown operator", `{stages: [{name: embed, operator: embed}, {name: r, operator: retreive}, {name: g, operator: generate}]}`, `unknown operator "retreive"`},
		{"wrong order", `{stages: [{name: r, operator: retrieve}, {name: e, operator: embed}, {name: g, operator: generate}]}`, "in that order"},
		{"bad param", `{stages: [{name: e, operator: embed}, {name: r, operator: retrieve}, {name: g, operator: generate, params: {max_tokens: "-1"}}]}`, "max_tokens"},
		{"unknown key", `{stages: [{name: e, operator: embed, workers: 3}, {name: r, operator: retrieve}, {name: g, operator: generate}]}`, "workers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runQ1(t, "q1:\n  graph: "+tc.graph+"\n", "--dry-run")
			if res.code != cli.ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d naming %q", res.code, res.stderr, cli.ExitUsage, tc.want)
			}
		})
	}
}

func TestQ1InterruptRecordsEveryTransaction(t *testing.T) {
	// Every retrieve hangs: when the run is interrupted, the transactions
	// in the graph get the drain, then end as cancelled records.
	srv, err := targettest.NewRAG(targettest.RAGOptions{HangEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := q1Loose + `drain: 200ms
q1:
  schedule: {process: constant, rate: 100, count: 10}
  llm: {model: m, max_tokens: 2}
`
	res := runQ1Within(t, 1500*time.Millisecond, cfg, "--target", srv.URL)
	if res.code != cli.ExitError || res.dir == "" || res.run.Complete {
		t.Fatalf("exit %d, complete %v; want %d and \"complete\": false\n%s", res.code, res.run.Complete, cli.ExitError, res.stderr)
	}
	txns, stages := byTxn(t, res.reqs)
	if len(txns) != 10 {
		t.Fatalf("%d transaction records, want all 10 (each ended explicitly)", len(txns))
	}
	for id, tx := range txns {
		if tx.OK || tx.ErrorClass != "canceled" {
			t.Errorf("%s: ok=%v class %q, want a cancelled transaction", id, tx.OK, tx.ErrorClass)
		}
		if len(stages[id]) != 0 {
			t.Errorf("%s: stage records %+v for a transaction that never came out of the graph", id, stages[id])
		}
	}
}

func TestQ1RecallNotMeasurableOnAnotherCorpus(t *testing.T) {
	// The stack is told to index another corpus (seed 7) than the one Q1
	// draws its questions from (the run's seed): recall is not claimed.
	dir := t.TempDir()
	stackYAML := filepath.Join(dir, "stack.yaml")
	if err := os.WriteFile(stackYAML, []byte("index: {size: 300, seed: 7}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(q1Tiny, "validity:", "target: {url: embedded, stack_config: "+stackYAML+"}\nvalidity:", 1)
	cfg = strings.Replace(cfg, "count: 20", "count: 5", 1)
	res := runQ1(t, cfg, "--parallelism", "4")
	if res.code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if m, _ := res.run.Result.Metric("recall_at_k"); m.State != result.NotMeasurable || !strings.Contains(m.Reason, "document") {
		t.Errorf("recall on a corpus that is not the local one: %+v\n%s", m, res.stdout)
	}
}

// TestQ1HarnessRetrievalWithoutRetrieveEndpoint: against an
// OpenAI-compatible target without /v1/retrieve, retrieval runs in the
// harness over the corpus embedded through the target, every transaction
// succeeds, and the records say so.
func TestQ1HarnessRetrievalWithoutRetrieveEndpoint(t *testing.T) {
	srv, err := targettest.NewRAG(targettest.RAGOptions{NoRetrieve: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := strings.Replace(q1Tiny, "count: 20", "count: 8", 1)
	res := runQ1(t, cfg, "--target", srv.URL)
	if res.code != cli.ExitOK || res.dir == "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	txns, stages := byTxn(t, res.reqs)
	if len(txns) != 8 || res.run.Summary.Failed != 0 {
		t.Fatalf("%d transactions, %d failed; want 8 and none (retrieve must not go to a 404)", len(txns), res.run.Summary.Failed)
	}
	for id, st := range stages {
		for _, s := range st {
			if s.Stage == "retrieve" && s.Engine != "harness-index" {
				t.Errorf("%s: retrieve stage engine %q, want harness-index", id, s.Engine)
			}
		}
	}
	if !strings.Contains(strings.Join(res.run.Notes, " "), "retrieval ran in the harness") {
		t.Errorf("the run does not say retrieval ran in the harness: notes %v", res.run.Notes)
	}
	if n := srv.Count("embeddings"); n < 2 {
		t.Errorf("%d embeddings calls: the corpus must be embedded through the target", n)
	}
}

// TestQ1PromptTokensTemplated: with the model's tokenizer and chat
// template, a transaction's input_tokens is its RAG prompt rendered with
// the template — what the reference stack, rendering the same template,
// reports as prompt_tokens — on the transaction and its generate stage.
func TestQ1PromptTokensTemplated(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "chattemplate", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	body := "tokenizer: " + filepath.Join(dir, "llama3.tokenizer.json") + "\nchat_template: " + filepath.Join(dir, "llama3.tokenizer_config.json") + "\n" + q1Tiny
	res := runQ1(t, body, "--parallelism", "8")
	if res.code != cli.ExitOK || res.dir == "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	txns, stages := byTxn(t, res.reqs)
	if len(txns) != 20 {
		t.Fatalf("%d transaction records, want 20", len(txns))
	}
	for id, tx := range txns {
		st := stages[id]
		if len(st) != 3 {
			t.Fatalf("%s: %d stage records", id, len(st))
		}
		for _, r := range []record.Request{tx, st[2]} {
			if !r.OK || r.InputTokens < 20 || r.InputTokens != r.PromptTok {
				t.Errorf("%s: ok %v, input_tokens %d, the server's templated prompt_tokens %d (%s)", r.ID, r.OK, r.InputTokens, r.PromptTok, r.Error)
			}
		}
	}
}
