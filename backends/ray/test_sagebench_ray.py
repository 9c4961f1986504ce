"""Tests of the driver (plan, readiness, schedule, HTTP pools and calls,
records) through LocalRuntime, and of RayRuntime through fakeray (a
stand-in for the Ray calls it makes), against an in-process fake target
on 127.0.0.1. Run: python3 -m unittest discover -s backends/ray
(go test ./internal/ray runs it too)."""

import concurrent.futures
import http.server
import io
import json
import os
import tempfile
import threading
import time
import unittest

import fakeray
import sagebench_ray as drv

TXN_KEYS = {"id", "seq", "kind", "type", "txn_id", "intended_ns", "sent_ns", "end_ns", "e2e_ms", "service_ms",
            "lag_ms", "status", "ok", "slo_met"}


class FakeTarget:
    """An OpenAI-compatible target with /v1/retrieve, keeping connections
    alive (HTTP/1.1; the stream chunked, with its server timing as a
    trailer). fail maps a path to a status to answer; generate streams
    `tokens` chunks; close_idle closes each connection after one answer
    although it announced keep-alive; no_done ends the stream after its
    finish_reason without [DONE]."""

    def __init__(self, fail=None, tokens=4, truncate=False, delay=0.0, close_idle=False, no_done=False, slow=None):
        self.fail, self.tokens, self.truncate, self.delay = fail or {}, tokens, truncate, delay
        self.slow = slow or {}  # query → seconds its embedding takes
        self.close_idle, self.no_done = close_idle, no_done
        self.lock = threading.Lock()
        self.inflight, self.peak = {}, {}
        self.requests = []  # (path, headers, body, time_ns, connection number)
        self.conns = 0
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def setup(self):
                super().setup()
                with outer.lock:
                    outer.conns += 1
                    self.conn_no = outer.conns

            def do_GET(self):
                assert self.path == "/v1/models", self.path
                outer.log(self, None)
                self.leave = lambda: None
                send(self, 200, b'{"data":[{"id":"llm"}]}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.enter(self, body)
                left = []

                def leave():  # once, before the answer's last bytes: the client
                    if not left:  # cannot send its next request before reading them
                        left.append(1)
                        outer.leave(self.path)
                self.leave = leave
                try:
                    outer.answer(self, body)
                finally:
                    leave()
                if outer.close_idle:
                    self.close_connection = True  # without saying so: the client finds out on reuse

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()

    def log(self, h, body):
        with self.lock:
            self.requests.append((h.path, dict(h.headers), body, time.time_ns(), h.conn_no))

    def enter(self, h, body):
        self.log(h, body)
        with self.lock:
            self.inflight[h.path] = self.inflight.get(h.path, 0) + 1
            self.peak[h.path] = max(self.peak.get(h.path, 0), self.inflight[h.path])

    def leave(self, path):
        with self.lock:
            self.inflight[path] -= 1

    def posts(self, path=None):
        with self.lock:
            return [r for r in self.requests if r[2] is not None and (path is None or r[0] == path)]

    def answer(self, h, body):
        timing = {"X-Sagebench-Retries": "1", "X-Sagebench-Queue-Us": "1500", "X-Engine-Id": "e1"}
        if h.path in self.fail:
            return send(h, self.fail[h.path], b'{"error":{"message":"injected"}}')
        if h.path == "/v1/embeddings":
            time.sleep(self.slow.get(body["input"][0], 0))
            timing["X-Sagebench-Server-Timing"] = "ttft_us=700;e2e_us=900"
            return send(h, 200, json.dumps({"data": [{"index": 0, "embedding": [0.1, 0.2, 0.3]}],
                                             "usage": {"prompt_tokens": 3}}).encode(), timing)
        if h.path == "/v1/retrieve":
            assert body["embedding"]
            docs = [{"id": i, "score": 0.9, "text": "doc %d" % i} for i in range(body["top_k"])]
            return send(h, 200, json.dumps({"data": docs}).encode(), timing)
        assert h.path == "/v1/chat/completions" and body["stream"] and "doc 0" in body["messages"][1]["content"]
        self.stream(h, timing)

    def stream(self, h, timing):
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.send_header("Trailer", "X-Sagebench-Server-Timing")
        for k, v in timing.items():
            h.send_header(k, v)
        h.end_headers()
        for i in range(self.tokens):
            time.sleep(self.delay)
            chunk({"choices": [{"index": 0, "delta": {"content": "t%d " % i}}]}, h)
        if self.truncate:
            h.close_connection = True
            return
        h.leave()
        chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
               "usage": {"prompt_tokens": 20, "completion_tokens": self.tokens}}, h)
        if not self.no_done:
            raw_chunk(b"data: [DONE]\n\n", h)
        else:
            h.close_connection = True
            return
        h.wfile.write(b"0\r\nX-Sagebench-Server-Timing: ttft_us=2000;e2e_us=5000\r\n\r\n")


def chunk(obj, h):
    raw_chunk(b"data: " + json.dumps(obj).encode() + b"\n\n", h)


def raw_chunk(b, h):
    h.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
    h.wfile.flush()


def send(h, status, body, headers=None):
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.leave()
    h.wfile.write(body)


def plan_for(url, n=3, gap_ms=2, parallelism=2, warm=2):
    return {"version": 2, "run_id": "q1-ray-0-test", "workload": "Q1", "target": url,
            "headers": {"Authorization": "Bearer k"}, "tenant": "tenant-a", "deadline_ms": 2000,
            "embedding_model": "emb", "llm_model": "llm", "request_timeout_s": 10, "ready_timeout_s": 10,
            "stages": [{"name": "embed", "op": "embed", "model": "emb", "parallelism": parallelism, "warm_conns": warm},
                       {"name": "retrieve", "op": "retrieve", "top_k": 2, "parallelism": parallelism, "warm_conns": warm},
                       {"name": "generate", "op": "generate", "model": "llm", "max_tokens": 4,
                        "parallelism": parallelism, "warm_conns": warm}],
            "arrivals": [{"seq": i, "offset_ns": i * gap_ms * 1_000_000, "query": "question %d" % i}
                         for i in range(n)]}


def run(plan, runtime=None):
    drv.check_plan(plan)
    out = io.StringIO()
    drv.drive(plan, runtime or drv.LocalRuntime(plan), out, lead_ns=1_000_000)
    meta, recs, done = None, [], None
    for line in out.getvalue().splitlines():
        if line.startswith(drv.MARK_RECORD):
            recs.append(json.loads(line[len(drv.MARK_RECORD):]))
        elif line.startswith(drv.MARK_META):
            meta = json.loads(line[len(drv.MARK_META):])
        elif line.startswith(drv.MARK_DONE):
            done = json.loads(line[len(drv.MARK_DONE):])
    return meta, recs, done


def load(plan):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(plan, f)
    f.close()
    try:
        return drv.load_plan(f.name)
    finally:
        os.remove(f.name)


class PlanTest(unittest.TestCase):
    def test_rejects(self):
        cases = {
            "version": lambda p: p.update(version=1),
            "stage order": lambda p: p["stages"].reverse(),
            "parallelism": lambda p: p["stages"][0].update(parallelism=0),
            "generate without max_tokens": lambda p: p["stages"][2].pop("max_tokens"),
            "retrieve without top_k": lambda p: p["stages"][1].update(top_k=0),
            "no arrivals": lambda p: p.update(arrivals=[]),
            "offsets go back": lambda p: p["arrivals"][2].update(offset_ns=0),
        }
        for name, mutate in cases.items():
            with self.subTest(name):
                plan = plan_for("http://127.0.0.1:1")
                mutate(plan)
                with self.assertRaises(drv.PlanError):
                    load(plan)

    def test_main_bad_plan_exits_2(self):
        plan = plan_for("http://127.0.0.1:1")
        plan["version"] = 9
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(plan, f)
        self.addCleanup(os.remove, f.name)
        self.assertEqual(drv.main(["--plan", f.name, "--runtime", "local"], out=io.StringIO()), 2)

    def test_defaults(self):
        plan = plan_for("http://127.0.0.1:1", warm=9)
        del plan["request_timeout_s"]
        del plan["stages"][0]["model"]
        got = load(plan)
        self.assertEqual(got["request_timeout_s"], 60)
        self.assertEqual(got["stages"][0]["model"], "emb")
        self.assertEqual(got["stages"][0]["warm_conns"], 2)  # at most the pool's size


class DriveTest(unittest.TestCase):
    def target(self, **kw):
        t = FakeTarget(**kw)
        self.addCleanup(t.close)
        return t

    def test_records_match_the_schema(self):
        t = self.target()
        plan = plan_for(t.url, n=4)
        meta, recs, done = run(plan)
        self.assertEqual(meta["runtime"], "local")
        self.assertEqual(done["records"], len(recs))
        self.assertEqual(len(recs), 4 * 4)  # a txn and three stages each
        txns = sorted((r for r in recs if r["kind"] == "txn"), key=lambda r: r["seq"])
        for a, tr in zip(plan["arrivals"], txns):
            self.assertLessEqual(TXN_KEYS, set(tr))
            self.assertEqual(tr["id"], "txn-%06d" % a["seq"])
            self.assertEqual(tr["intended_ns"], max(a["offset_ns"], 1))
            self.assertTrue(tr["ok"])
            self.assertEqual(tr["status"], 200)
            self.assertEqual(tr["completion_tokens"], 4)
            self.assertEqual(len(tr["token_ns"]), 4)
            self.assertLessEqual(tr["intended_ns"], tr["sent_ns"])
            self.assertLess(tr["sent_ns"], tr["first_token_ns"])
            self.assertLessEqual(tr["first_token_ns"], tr["end_ns"])
            self.assertNotIn("first_byte_ns", tr)
        for st in (r for r in recs if r["kind"] == "stage"):
            self.assertEqual(st["id"], st["txn_id"] + "/" + st["stage"])
            self.assertEqual(st["type"], {"embed": "embedding", "retrieve": "retrieve", "generate": "llm"}[st["stage"]])
            self.assertTrue(st["ok"])
            self.assertLessEqual(st["intended_ns"], st["sent_ns"])
            self.assertLessEqual(st["sent_ns"], st["end_ns"])
            self.assertEqual(st["node"], drv.socket.gethostname())
        _, headers, _, _, _ = t.posts()[0]
        self.assertEqual(headers["Authorization"], "Bearer k")
        self.assertEqual(headers["X-Tenant-Id"], "tenant-a")
        self.assertEqual(headers["X-Request-Type"], "rag")
        self.assertIn("x-slo-deadline-ms", {k.lower() for k in headers})

    def test_fields_sage_records_too(self):
        """Retries, the gateway's queue wait and the target's own timing
        (a header, or a trailer on the stream) are recorded per stage; the
        transaction gets the generate call's retries as on sage, and TPOT
        comes from the tokens actually timed."""
        t = self.target()
        _, recs, _ = run(plan_for(t.url, n=1))
        st = {r["stage"]: r for r in recs if r["kind"] == "stage"}
        for name in ("embed", "retrieve", "generate"):
            self.assertEqual((st[name]["retries"], st[name]["queue_ms"], st[name]["engine"]), (1, 1.5, "e1"), name)
        self.assertEqual((st["embed"]["server_ttft_ms"], st["embed"]["server_e2e_ms"]), (0.7, 0.9))
        self.assertNotIn("server_e2e_ms", st["retrieve"])
        self.assertEqual(st["retrieve"]["retrieved_ids"], [0, 1])  # top_k 2: the documents' ids, for recall@k
        # the generate stage carries the messages it sent (sagebench counts
        # them as its input_tokens, with the run's chat template), no other does
        sent = t.posts("/v1/chat/completions")[0][2]["messages"]
        self.assertEqual(st["generate"]["prompt"], sent)
        self.assertEqual([m["role"] for m in sent], ["system", "user"])
        for name in ("embed", "retrieve"):
            self.assertNotIn("prompt", st[name])
        self.assertNotIn("retrieved_ids", st["embed"])
        self.assertEqual((st["generate"]["server_ttft_ms"], st["generate"]["server_e2e_ms"]), (2.0, 5.0))
        self.assertEqual(st["generate"]["first_answer_token_ns"], st["generate"]["first_token_ns"])
        tr = [r for r in recs if r["kind"] == "txn"][0]
        self.assertEqual(tr["retries"], 1)
        for k in ("queue_ms", "server_e2e_ms", "note"):
            self.assertNotIn(k, tr)
        tok = st["generate"]["token_ns"]
        self.assertAlmostEqual(st["generate"]["tpot_ms"], (tok[-1] - tok[0]) / 1e6 / (len(tok) - 1), places=3)

    def test_per_stage_settings(self):
        """Each stage's own max_tokens, top_k and model reach the target."""
        t = self.target()
        plan = plan_for(t.url, n=2)
        plan["stages"][1]["top_k"] = 3
        plan["stages"][2].update(max_tokens=7, model="other-llm")
        _, recs, _ = run(plan)
        for _, _, body, _, _ in t.posts("/v1/retrieve"):
            self.assertEqual(body["top_k"], 3)
        for _, _, body, _, _ in t.posts("/v1/chat/completions"):
            self.assertEqual((body["max_tokens"], body["model"]), (7, "other-llm"))
        gen = [r for r in recs if r.get("stage") == "generate"][0]
        self.assertEqual(gen["model"], "other-llm")

    def test_ready_before_traffic(self):
        """Every stage is ready, its pool warmed, before the schedule's
        zero; no call reaches the target before readiness, and none needs
        a new connection."""
        t = self.target()
        meta, recs, _ = run(plan_for(t.url, n=6, gap_ms=1))
        self.assertLessEqual(meta["ready_unix_ns"], meta["start_unix_ns"])
        self.assertEqual([(s["stage"], s["wanted"], s["warmed"]) for s in meta["warmup"]["stages"]],
                         [("embed", 2, 2), ("retrieve", 2, 2), ("generate", 2, 2)])
        self.assertTrue(all(s["ready_ms"] >= 0 for s in meta["warmup"]["stages"]))
        for path, _, _, at, _ in t.posts():
            self.assertGreaterEqual(at, meta["ready_unix_ns"], path)
        self.assertEqual(t.conns, 6, "the warmed connections carried every call")

    def test_keep_alive(self):
        """Calls reuse the stage's connections: at most its concurrency of
        them, not one (or three) per transaction."""
        t = self.target()
        _, recs, done = run(plan_for(t.url, n=10, gap_ms=1, warm=0))
        self.assertEqual(done["records"], 10 * 4)
        self.assertLessEqual(t.conns, 3 * 2)

    def test_a_closed_idle_connection_is_replaced(self):
        t = self.target(close_idle=True)
        _, recs, _ = run(plan_for(t.url, n=3, gap_ms=5, parallelism=1, warm=1))
        self.assertTrue(all(r["ok"] for r in recs), [r.get("error") for r in recs])
        self.assertTrue(any(r.get("note", "").startswith("sent 2 times") for r in recs))

    def test_no_done_after_finish_is_ok(self):
        t = self.target(no_done=True)
        _, recs, _ = run(plan_for(t.url, n=1))
        gen = [r for r in recs if r.get("stage") == "generate"][0]
        self.assertTrue(gen["ok"])
        self.assertIn("without [DONE]", gen["note"])

    def test_a_failed_stage_ends_the_transaction(self):
        t = self.target(fail={"/v1/retrieve": 503})
        _, recs, done = run(plan_for(t.url, n=2))
        self.assertEqual(done["records"], 2 * 3)  # txn, embed, retrieve: generate never ran
        for tr in (r for r in recs if r["kind"] == "txn"):
            self.assertFalse(tr["ok"])
            self.assertEqual((tr["error_class"], tr["status"]), ("http_5xx", 503))
        stages = {r["stage"]: r for r in recs if r["kind"] == "stage" and r["seq"] == 0}
        self.assertEqual(set(stages), {"embed", "retrieve"})
        self.assertTrue(stages["embed"]["ok"])
        self.assertEqual(stages["retrieve"]["error_class"], "http_5xx")

    def test_error_classes(self):
        cases = {"429": ({"/v1/embeddings": 429}, "http_429"), "400": ({"/v1/embeddings": 400}, "http_4xx")}
        for name, (fail, cls) in cases.items():
            with self.subTest(name):
                t = self.target(fail=fail)
                _, recs, _ = run(plan_for(t.url, n=1))
                self.assertEqual(recs[0]["error_class"], cls)

    def test_truncated_stream(self):
        t = self.target(truncate=True)
        _, recs, _ = run(plan_for(t.url, n=1))
        tr = [r for r in recs if r["kind"] == "txn"][0]
        self.assertEqual(tr["error_class"], "truncated")

    def test_warm_up_of_a_target_that_refuses_some(self):
        """Connections that fail to open do not hold the others back."""
        t = self.target()
        pool = drv.Pool(t.url, 4, 5)
        self.addCleanup(pool.close)
        dial, calls, lock = pool.dial, [], threading.Lock()

        def flaky():  # every other dial refused, whichever thread dials (warm dials at once)
            with lock:
                calls.append(1)
                refuse = len(calls) % 2
            if refuse:
                raise drv.CallFailed("connect", 0, "refused")
            return dial()
        pool.dial = flaky
        self.assertEqual(pool.warm(4, {}, timeout=30), 2)
        self.assertEqual(len(pool.idle), 2, "the connections that opened are kept")

    def test_unreachable_target(self):
        t = self.target()
        url = t.url
        t.close()
        _, recs, _ = run(plan_for(url, n=1))
        self.assertEqual(recs[0]["error_class"], "connect")

    def test_a_lost_transaction_is_a_stage_error(self):
        plan = plan_for("http://127.0.0.1:1", n=1)
        txn = {"id": "txn-000000", "seq": 0, "query": "q", "intended_unix": 10, "accepted": 20, "hops": [],
               "failed": True, "error": "RayActorError: died"}
        recs = drv.records(plan, drv.Clock(0), txn, 30)
        self.assertEqual(len(recs), 1)
        self.assertEqual((recs[0]["error_class"], recs[0]["error"]), ("stage_error", "RayActorError: died"))
        self.assertFalse(recs[0]["ok"])

    def test_parallelism_bounds_each_stage(self):
        t = self.target(delay=0.01)
        plan = plan_for(t.url, n=8, gap_ms=0, parallelism=2)
        _, recs, done = run(plan)
        self.assertEqual(done["records"], 8 * 4)
        self.assertLessEqual(t.peak["/v1/chat/completions"], 2)
        self.assertLessEqual(t.peak["/v1/embeddings"], 2)


class RayRuntimeTest(unittest.TestCase):
    """RayRuntime's own code (actors, readiness, ref chaining, the wait
    loop) through fakeray: not Ray, but every line of it runs."""

    def test_drive_on_actors(self):
        t = FakeTarget(delay=0.005)
        self.addCleanup(t.close)
        plan = drv.check_plan(plan_for(t.url, n=6, gap_ms=1))
        meta, recs, done = run(plan, drv.RayRuntime(plan, ray=fakeray))
        self.assertEqual((meta["runtime"], meta["ray_version"]), ("ray", fakeray.__version__))
        self.assertEqual(done["records"], 6 * 4)
        self.assertLessEqual(meta["ready_unix_ns"], meta["start_unix_ns"])
        self.assertEqual([s["warmed"] for s in meta["warmup"]["stages"]], [2, 2, 2])
        for _, _, _, at, _ in t.posts():
            self.assertGreaterEqual(at, meta["ready_unix_ns"])
        self.assertLessEqual(t.peak["/v1/chat/completions"], 2)
        self.assertTrue(all(r["ok"] for r in recs))

    def test_an_actor_that_dies_fails_its_transactions(self):
        t = FakeTarget()
        self.addCleanup(t.close)
        plan = drv.check_plan(plan_for(t.url, n=2))
        rt = drv.RayRuntime(plan, ray=fakeray)

        class Dead:  # an actor handle whose run calls fail, as a dead actor's do
            ready = rt.actors[1].ready
            close = rt.actors[1].close

            class run:
                @staticmethod
                def remote(*args):
                    f = concurrent.futures.Future()
                    f.set_exception(RuntimeError("RayActorError: the actor died"))
                    return fakeray.ObjectRef(f)
        rt.actors[1] = Dead()
        _, recs, done = run(plan, rt)
        self.assertEqual(done["records"], 2 * 3)  # the transaction, its embed and the dead retrieve
        by = {(r["txn_id"], r.get("stage", "")): r for r in recs}
        for i in range(2):
            tid = "txn-%06d" % i
            self.assertTrue(by[(tid, "embed")]["ok"], "the stage before the dead actor keeps its record")
            for k in ((tid, ""), (tid, "retrieve")):
                self.assertEqual(by[k]["error_class"], "stage_error")
                self.assertIn("actor died", by[k]["error"])

    def test_no_head_of_line_blocking(self):
        hol_check(self, fakeray)

    def test_fakeray_models_the_sequential_queue(self):
        """What the driver avoids: on an actor of max_concurrency 1 a call
        whose argument is not ready holds back a later call."""
        hol_demo(self, fakeray)


def hol_plan(url, ready_s=10):
    """Q1's stages with retrieve at parallelism 1 behind a wider embed;
    txn 0's embedding takes 0.8 s, txn 1's none."""
    plan = plan_for(url, n=2, gap_ms=1, parallelism=2, warm=1)
    plan["ready_timeout_s"] = ready_s
    plan["stages"][1]["parallelism"] = 1
    return drv.check_plan(plan)


def hol_check(tc, ray, ready_s=10):
    t = FakeTarget(slow={"question 0": 0.8})
    tc.addCleanup(t.close)
    plan = hol_plan(t.url, ready_s)
    _, recs, _ = run(plan, drv.RayRuntime(plan, ray=ray))
    by = {(r["txn_id"], r.get("stage", "")): r for r in recs}
    slow, fast = by[("txn-000000", "")], by[("txn-000001", "")]
    tc.assertTrue(slow["ok"] and fast["ok"], recs)
    # txn 1 does not wait for txn 0's embedding at the retrieve stage.
    tc.assertLess(fast["e2e_ms"], slow["e2e_ms"] - 400, (fast, slow))
    return fast["e2e_ms"], slow["e2e_ms"]


def hol_demo(tc, ray):
    """Chained submission (refs handed on before they are ready) to an
    actor of max_concurrency 1: the second call, ready at once, starts
    only after the first, whose argument takes 0.8 s. Returns its wait (s)."""

    @ray.remote
    class Slow:
        def value(self, d):
            time.sleep(d)
            return d

    @ray.remote
    class One:
        def at(self, _):
            return time.time()

    src = Slow.options(max_concurrency=2).remote()
    one = One.options(max_concurrency=1).remote()
    ray.get([src.value.remote(0), one.at.remote(0)])  # both actors up
    t0 = time.time()
    a = one.at.remote(src.value.remote(0.8))
    b = one.at.remote(src.value.remote(0))
    waited = ray.get(b) - t0
    ray.get(a)
    tc.assertGreater(waited, 0.7, "the ready call ran ahead of the blocked one: no sequential queue")
    return waited


READY_S = 240  # actors' worker processes start slowly on a loaded machine


@unittest.skipUnless(os.environ.get("SAGEBENCH_TEST_REAL_RAY"), "SAGEBENCH_TEST_REAL_RAY unset: no local Ray here")
class RealRayTest(unittest.TestCase):
    """The same checks on real Ray (ray.init of a local cluster), run by
    internal/ray TestDriverOnRealRay with the venv's python."""

    @classmethod
    def setUpClass(cls):
        import ray
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        cls.ray = ray

    @classmethod
    def tearDownClass(cls):
        cls.ray.shutdown()

    def test_drive_on_actors(self):
        t = FakeTarget(delay=0.005)
        self.addCleanup(t.close)
        plan = drv.check_plan(dict(plan_for(t.url, n=6, gap_ms=1), ready_timeout_s=READY_S))
        meta, recs, done = run(plan, drv.RayRuntime(plan, ray=self.ray))
        self.assertEqual(done["records"], 6 * 4)
        self.assertTrue(all(r["ok"] for r in recs), recs)

    def test_head_of_line_blocking_is_real_and_avoided(self):
        waited = hol_demo(self, self.ray)
        print("\nreal Ray: chained call on a max_concurrency=1 actor waited %.0f ms behind a blocked one" % (waited * 1000))
        fast, slow = hol_check(self, self.ray, READY_S)
        print("real Ray, driver (stage-by-stage): txn 1 e2e %.0f ms vs txn 0 %.0f ms" % (fast, slow))

    def test_a_dead_actor_keeps_the_history(self):
        t = FakeTarget()
        self.addCleanup(t.close)
        plan = drv.check_plan(dict(plan_for(t.url, n=1), ready_timeout_s=READY_S))

        class GenerateDies(drv.RayRuntime):
            def start(self):
                out = super().start()
                self.ray.kill(self.actors[2])  # generate's actor dies once ready
                return out
        _, recs, done = run(plan, GenerateDies(plan, ray=self.ray))
        by = {r.get("stage", ""): r for r in recs}
        self.assertTrue(by["embed"]["ok"] and by["retrieve"]["ok"], recs)
        self.assertEqual(by["generate"]["error_class"], "stage_error")
        self.assertIn("Actor", by["generate"]["error"])


if __name__ == "__main__":
    unittest.main()
