"""Tests of the driver's non-Ray logic (plan, schedule, HTTP calls,
records) through LocalRuntime against an in-process fake target on
127.0.0.1. Run: python3 -m unittest discover -s backends/ray
(go test ./internal/ray runs it too when python3 is present)."""

import http.server
import io
import json
import os
import tempfile
import threading
import time
import unittest

import sagebench_ray as drv

TXN_KEYS = {"id", "seq", "kind", "type", "txn_id", "intended_ns", "sent_ns", "end_ns", "e2e_ms", "service_ms",
            "lag_ms", "status", "ok", "slo_met"}


class FakeTarget:
    """An OpenAI-compatible target with /v1/retrieve; fail maps a path to
    a status to answer; generate streams `tokens` chunks."""

    def __init__(self, fail=None, tokens=4, truncate=False, delay=0.0):
        self.fail, self.tokens, self.truncate, self.delay = fail or {}, tokens, truncate, delay
        self.lock = threading.Lock()
        self.inflight = {}
        self.peak = {}
        self.headers = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.enter(self.path, dict(self.headers))
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

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()

    def enter(self, path, headers):
        with self.lock:
            self.headers.append(headers)
            self.inflight[path] = self.inflight.get(path, 0) + 1
            self.peak[path] = max(self.peak.get(path, 0), self.inflight[path])

    def leave(self, path):
        with self.lock:
            self.inflight[path] -= 1

    def answer(self, h, body):
        if h.path in self.fail:
            return send(h, self.fail[h.path], b'{"error":{"message":"injected"}}')
        if h.path == "/v1/embeddings":
            return send(h, 200, json.dumps({"data": [{"index": 0, "embedding": [0.1, 0.2, 0.3]}],
                                             "usage": {"prompt_tokens": 3}}).encode())
        if h.path == "/v1/retrieve":
            assert body["embedding"] and body["top_k"] == 2
            return send(h, 200, json.dumps({"data": [{"id": 1, "score": 0.9, "text": "doc one"},
                                                      {"id": 2, "score": 0.8, "text": "doc two"}]}).encode())
        assert h.path == "/v1/chat/completions" and body["stream"] and "doc one" in body["messages"][1]["content"]
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        for i in range(self.tokens):
            time.sleep(self.delay)
            chunk = {"choices": [{"index": 0, "delta": {"content": "t%d " % i}}]}
            h.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            h.wfile.flush()
        if self.truncate:
            return
        usage = {"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": self.tokens}}
        h.leave()
        h.wfile.write(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")


def send(h, status, body):
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.leave()
    h.wfile.write(body)


def plan_for(url, n=3, gap_ms=2, parallelism=2):
    return {"version": 1, "run_id": "q1-ray-0-test", "workload": "Q1", "target": url,
            "headers": {"Authorization": "Bearer k"}, "tenant": "tenant-a", "deadline_ms": 2000, "top_k": 2,
            "embedding_model": "emb", "llm_model": "llm", "max_tokens": 4, "request_timeout_s": 10,
            "stages": [{"name": "embed", "op": "embed", "parallelism": parallelism},
                       {"name": "retrieve", "op": "retrieve", "parallelism": parallelism},
                       {"name": "generate", "op": "generate", "parallelism": parallelism}],
            "arrivals": [{"seq": i, "offset_ns": i * gap_ms * 1_000_000, "query": "question %d" % i}
                         for i in range(n)]}


def run(plan):
    out = io.StringIO()
    drv.drive(plan, drv.LocalRuntime(plan), out, lead_ns=1_000_000)
    meta, recs, done = None, [], None
    for line in out.getvalue().splitlines():
        if line.startswith(drv.MARK_RECORD):
            recs.append(json.loads(line[len(drv.MARK_RECORD):]))
        elif line.startswith(drv.MARK_META):
            meta = json.loads(line[len(drv.MARK_META):])
        elif line.startswith(drv.MARK_DONE):
            done = json.loads(line[len(drv.MARK_DONE):])
    return meta, recs, done


class PlanTest(unittest.TestCase):
    def write(self, plan):
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(plan, f)
        f.close()
        self.addCleanup(os.remove, f.name)
        return f.name

    def test_rejects(self):
        cases = {
            "version": lambda p: p.update(version=2),
            "stage order": lambda p: p["stages"].reverse(),
            "parallelism": lambda p: p["stages"][0].update(parallelism=0),
            "no arrivals": lambda p: p.update(arrivals=[]),
            "offsets go back": lambda p: p["arrivals"][2].update(offset_ns=0),
        }
        for name, mutate in cases.items():
            with self.subTest(name):
                plan = plan_for("http://127.0.0.1:1")
                mutate(plan)
                with self.assertRaises(drv.PlanError):
                    drv.load_plan(self.write(plan))

    def test_main_bad_plan_exits_2(self):
        plan = plan_for("http://127.0.0.1:1")
        plan["version"] = 9
        self.assertEqual(drv.main(["--plan", self.write(plan), "--runtime", "local"], out=io.StringIO()), 2)

    def test_defaults(self):
        plan = plan_for("http://127.0.0.1:1")
        del plan["request_timeout_s"]
        self.assertEqual(drv.load_plan(self.write(plan))["request_timeout_s"], 60)


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
        self.assertEqual(t.headers[0]["Authorization"], "Bearer k")
        self.assertEqual(t.headers[0]["X-Tenant-Id"], "tenant-a")
        self.assertEqual(t.headers[0]["X-Request-Type"], "rag")
        self.assertIn("x-slo-deadline-ms", {k.lower() for k in t.headers[0]})

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

    def test_stage_model_param_is_recorded(self):
        t = self.target()
        plan = plan_for(t.url, n=1)
        plan["stages"][2]["model"] = "other-llm"
        _, recs, _ = run(plan)
        gen = [r for r in recs if r.get("stage") == "generate"][0]
        self.assertEqual(gen["model"], "other-llm")

    def test_parallelism_bounds_each_stage(self):
        t = self.target(delay=0.01)
        plan = plan_for(t.url, n=8, gap_ms=0, parallelism=2)
        _, recs, done = run(plan)
        self.assertEqual(done["records"], 8 * 4)
        self.assertLessEqual(t.peak["/v1/chat/completions"], 2)
        self.assertLessEqual(t.peak["/v1/embeddings"], 2)


if __name__ == "__main__":
    unittest.main()
