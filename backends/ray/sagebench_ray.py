#!/usr/bin/env python3
"""sagebench's Ray driver: Q1's embed -> retrieve -> generate on Ray.

sagebench (`run --backend ray`) uploads this file with plan.json as the
job's working_dir and runs `python sagebench_ray.py --plan plan.json`.
The plan holds the target, the stages with their concurrency, and every
arrival (intended offset, query), so this driver sends the same arrivals
as the sage backend. Each stage is one threaded Ray actor whose
max_concurrency is the stage's parallelism; a transaction's stages are
chained by passing object refs. Every finished transaction is printed as
sagebench records (the requests.jsonl schema), one
"SAGEBENCH_RECORD <json>" line each, which sagebench reads back from the
job's log.

Only the Runtime differs between Ray and the test seam (LocalRuntime:
one thread pool per stage, same concurrency): plan reading, the
schedule, the HTTP calls (urllib, no third-party packages) and the
records are the same code. SAGEBENCH_RAY_RUNTIME=local selects the seam.
"""

import argparse
import concurrent.futures
import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

PLAN_VERSION = 1
MARK_RECORD = "SAGEBENCH_RECORD "
MARK_META = "SAGEBENCH_META "
MARK_DONE = "SAGEBENCH_DONE "
OPS = ("embed", "retrieve", "generate")
STAGE_TYPE = {"embed": "embedding", "retrieve": "retrieve", "generate": "llm"}
MAX_ERROR = 300


class PlanError(ValueError):
    """The plan file is unusable."""


def load_plan(path):
    """Reads and checks the plan sagebench wrote."""
    with open(path, encoding="utf-8") as f:
        plan = json.load(f)
    if plan.get("version") != PLAN_VERSION:
        raise PlanError("plan version %r: this driver reads %d" % (plan.get("version"), PLAN_VERSION))
    for key in ("target", "stages", "arrivals", "embedding_model", "llm_model"):
        if not plan.get(key):
            raise PlanError("plan: %s is missing or empty" % key)
    ops = [s.get("op") for s in plan["stages"]]
    if tuple(ops) != OPS:
        raise PlanError("plan: stages run %s; Q1 runs %s" % (ops, list(OPS)))
    for s in plan["stages"]:
        if int(s.get("parallelism", 0)) < 1:
            raise PlanError("plan: stage %s: parallelism must be >= 1" % s.get("name"))
    last = -1
    for a in plan["arrivals"]:
        if a["offset_ns"] < last:
            raise PlanError("plan: arrival %d is earlier than the one before" % a["seq"])
        last = a["offset_ns"]
    plan.setdefault("top_k", 5)
    plan.setdefault("max_tokens", 32)
    plan.setdefault("request_timeout_s", 60)
    plan.setdefault("headers", {})
    return plan


# ---- HTTP calls -----------------------------------------------------------


class CallFailed(Exception):
    def __init__(self, cls, status, msg):
        super().__init__(msg)
        self.cls, self.status = cls, status


def classify(exc):
    """Maps an exception to sagebench's error class and HTTP status."""
    if isinstance(exc, CallFailed):
        return exc.cls, exc.status
    if isinstance(exc, urllib.error.HTTPError):
        if exc.code == 429:
            return "http_429", exc.code
        return ("http_4xx" if 400 <= exc.code < 500 else "http_5xx"), exc.code
    if isinstance(exc, urllib.error.URLError):
        exc = exc.reason if isinstance(exc.reason, BaseException) else exc
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timeout", 0
    if isinstance(exc, ConnectionResetError):
        return "reset", 0
    if isinstance(exc, (ConnectionError, OSError, urllib.error.URLError)):
        return "connect", 0
    if isinstance(exc, ValueError):
        return "malformed", 0
    return "stream_error", 0


def now():
    return time.time_ns()


def new_call(stage):
    return {"stage": stage, "sent": 0, "first_byte": 0, "first_token": 0, "end": 0, "tokens": [],
            "status": 0, "ok": False, "error_class": "", "error": "", "engine": "",
            "prompt_tokens": 0, "completion_tokens": 0}


def request(plan, stage, path, body, txn):
    headers = {"Content-Type": "application/json", "X-Request-Type": "rag"}
    headers.update(plan.get("headers") or {})
    if plan.get("tenant"):
        headers["X-Tenant-Id"] = plan["tenant"]
    if plan.get("deadline_ms", 0) > 0:
        left = plan["deadline_ms"] - (now() - txn["intended_unix"]) // 1_000_000
        headers["X-SLO-Deadline-Ms"] = str(max(left, 1))
    url = plan["target"].rstrip("/") + path
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    # the stage's timeout bounds each blocking socket operation (urllib has
    # no whole-request bound); without one, the plan's request timeout
    return urllib.request.urlopen(req, timeout=stage.get("timeout_s") or plan["request_timeout_s"])


def call_json(plan, stage, path, body, txn):
    """POSTs body and returns (call, decoded answer or None)."""
    c = new_call(stage["name"])
    c["sent"] = now()
    try:
        with request(plan, stage, path, body, txn) as resp:
            c["first_byte"] = now()
            c["status"], c["engine"] = resp.status, resp.headers.get("X-Engine-Id", "")
            out = json.loads(resp.read())
        c["end"], c["ok"] = now(), True
        return c, out
    except Exception as exc:  # every failure becomes the call's class
        fail(c, exc)
        return c, None


def fail(c, exc):
    c["end"] = c["end"] or now()
    c["ok"] = False
    c["error_class"], status = classify(exc)
    c["status"] = status or c["status"]
    c["error"] = ("%s: %s" % (type(exc).__name__, exc))[:MAX_ERROR]


def do_embed(plan, stage, txn):
    c, out = call_json(plan, stage, "/v1/embeddings",
                       {"model": stage.get("model") or plan["embedding_model"], "input": [txn["query"]]}, txn)
    if c["ok"]:
        try:
            txn["vector"] = out["data"][0]["embedding"]
            c["prompt_tokens"] = (out.get("usage") or {}).get("prompt_tokens", 0)
            if not txn["vector"]:
                raise ValueError("empty embedding")
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            fail(c, CallFailed("malformed", c["status"], "embeddings: %s" % exc))
    return c


def do_retrieve(plan, stage, txn):
    c, out = call_json(plan, stage, "/v1/retrieve",
                       {"embedding": txn.pop("vector", None), "top_k": plan["top_k"]}, txn)
    if c["ok"]:
        if not isinstance(out.get("data"), list):
            fail(c, CallFailed("malformed", c["status"], "retrieve: response has no data array"))
        else:
            txn["hits"] = [d.get("text", "") for d in out["data"]]
    return c


def prompt(txn):
    ctx = "".join("[%d] %s\n" % (i + 1, h) for i, h in enumerate(txn.get("hits", [])))
    return [{"role": "system", "content": "Answer the question using only the numbered context passages; cite them as [n]."},
            {"role": "user", "content": "Context:\n" + ctx + "\nQuestion: " + txn["query"]}]


def do_generate(plan, stage, txn):
    c = new_call(stage["name"])
    body = {"model": stage.get("model") or plan["llm_model"], "max_tokens": plan["max_tokens"], "stream": True,
            "stream_options": {"include_usage": True}, "messages": prompt(txn)}
    c["sent"] = now()
    try:
        with request(plan, stage, "/v1/chat/completions", body, txn) as resp:
            c["first_byte"] = now()
            c["status"], c["engine"] = resp.status, resp.headers.get("X-Engine-Id", "")
            read_stream(resp, c)
        c["end"], c["ok"] = now(), True
    except Exception as exc:
        fail(c, exc)
    return c


def read_stream(resp, c):
    """Reads an SSE chat stream: a timestamp per content chunk, usage."""
    for raw in resp:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        chunk = json.loads(data)
        if "error" in chunk:
            raise CallFailed("stream_error", c["status"], "stream error: %s" % chunk["error"])
        for choice in chunk.get("choices") or []:
            if (choice.get("delta") or {}).get("content"):
                t = now()
                c["first_token"] = c["first_token"] or t
                c["tokens"].append(t)
        usage = chunk.get("usage") or {}
        c["prompt_tokens"] = usage.get("prompt_tokens", c["prompt_tokens"])
        c["completion_tokens"] = usage.get("completion_tokens", c["completion_tokens"])
    raise CallFailed("truncated", c["status"], "stream ended without [DONE]")


CALLS = {"embed": do_embed, "retrieve": do_retrieve, "generate": do_generate}


def run_stage(plan, index, txn):
    """Runs stage index of txn: enqueued is when the stage before ended
    (or the source accepted it); a failed transaction passes through."""
    if txn.get("failed"):
        return txn
    stage = plan["stages"][index]
    hops = txn["hops"]
    enqueued = hops[-1]["ended"] if hops else txn["accepted"]
    started = now()
    try:
        c = CALLS[stage["op"]](plan, stage, txn)
    except Exception as exc:  # a bug in the stage, not the call: keep the transaction
        c = new_call(stage["name"])
        fail(c, CallFailed("stage_error", 0, "stage %s: %s" % (stage["name"], exc)))
    hops.append({"stage": stage["name"], "op": stage["op"], "model": stage.get("model", ""), "enqueued": enqueued, "started": started,
                 "ended": now(), "call": c})
    txn["failed"] = not c["ok"]
    return txn


# ---- records --------------------------------------------------------------


def ms(ns):
    return ns / 1e6


class Clock:
    """Offsets from the schedule's zero; 0 stays "did not happen"."""

    def __init__(self, zero):
        self.zero = zero

    def off(self, t):
        return max(t - self.zero, 1) if t else 0


def fill_call(rec, clock, frm, c):
    rec.update(sent_ns=clock.off(c["sent"]), first_byte_ns=clock.off(c["first_byte"]),
               first_token_ns=clock.off(c["first_token"]), service_ms=ms(c["end"] - c["sent"]),
               lag_ms=ms(c["sent"] - frm), status=c["status"], engine=c["engine"],
               prompt_tokens=c["prompt_tokens"], completion_tokens=c["completion_tokens"])
    if c["tokens"]:
        rec["token_ns"] = [clock.off(t) for t in c["tokens"]]
    if c["first_token"]:
        rec["ttft_ms"] = ms(c["first_token"] - frm)
        n = max(c["completion_tokens"], len(c["tokens"]))
        if n > 1:
            rec["tpot_ms"] = ms(c["end"] - c["first_token"]) / (n - 1)


def stage_record(plan, clock, txn, hop):
    tid = txn["id"]
    model = hop.get("model") or {"embed": plan["embedding_model"], "generate": plan["llm_model"]}.get(hop["op"], "")
    rec = {"id": tid + "/" + hop["stage"], "seq": txn["seq"], "kind": "stage", "type": STAGE_TYPE[hop["op"]],
           "stage": hop["stage"], "txn_id": tid, "tenant": plan.get("tenant", ""), "model": model,
           "intended_ns": clock.off(hop["enqueued"]), "end_ns": clock.off(hop["ended"]),
           "e2e_ms": ms(hop["ended"] - hop["enqueued"]), "status": 0, "ok": False, "slo_met": False}
    c = hop["call"]
    if c["ok"]:
        fill_call(rec, clock, hop["enqueued"], c)
        rec["ok"] = True
        return rec
    rec.update(sent_ns=clock.off(hop["started"]), lag_ms=ms(hop["started"] - hop["enqueued"]),
               service_ms=ms(hop["ended"] - hop["started"]), error_class=c["error_class"],
               error=c["error"], status=c["status"])
    return rec


def records(plan, clock, txn, received):
    """The transaction's record and one per stage it went through, as
    sagebench's Q1 writes them (internal/workload/q1/records.go)."""
    tid, intended, accepted = txn["id"], txn["intended_unix"], txn["accepted"]
    tr = {"id": tid, "seq": txn["seq"], "kind": "txn", "type": "rag", "txn_id": tid,
          "tenant": plan.get("tenant", ""), "model": plan["llm_model"], "intended_ns": clock.off(intended),
          "sent_ns": clock.off(accepted), "end_ns": clock.off(received), "e2e_ms": ms(received - intended),
          "service_ms": ms(received - accepted), "lag_ms": ms(accepted - intended), "status": 0,
          "ok": not txn.get("failed"), "slo_met": False}
    stages = [stage_record(plan, clock, txn, h) for h in txn["hops"]]
    gen = [h["call"] for h in txn["hops"] if h["op"] == "generate" and h["call"]["ok"]]
    if gen:
        keep = {k: tr[k] for k in ("sent_ns", "lag_ms", "service_ms")}
        fill_call(tr, clock, intended, gen[0])
        tr.update(keep, first_byte_ns=0)
    if txn.get("failed"):
        last = txn["hops"][-1]["call"] if txn["hops"] else {"error_class": "stage_error", "status": 0,
                                                             "error": txn.get("error", "the pipeline lost it")}
        tr.update(error_class=last["error_class"], error=last["error"], status=last["status"])
    return [compact(r) for r in [tr] + stages]


def compact(rec):
    """Drops empty optional fields, as Go's omitempty does."""
    keep = {"id", "seq", "kind", "type", "intended_ns", "sent_ns", "end_ns", "e2e_ms", "service_ms",
            "lag_ms", "status", "ok", "slo_met"}
    return {k: v for k, v in rec.items() if k in keep or v not in (0, "", [], None)}


# ---- runtimes -------------------------------------------------------------


class LocalRuntime:
    """The test seam: one thread pool per stage, max_workers = the
    stage's parallelism; stage k+1 is submitted when stage k ends."""

    name = "local"

    def __init__(self, plan):
        self.plan = plan
        self.pools = [concurrent.futures.ThreadPoolExecutor(max_workers=s["parallelism"]) for s in plan["stages"]]

    def info(self):
        return "", {}

    def submit(self, txn, done):
        self._stage(0, txn, done)

    def _stage(self, k, txn, done):
        fut = self.pools[k].submit(run_stage, self.plan, k, txn)

        def next_(f):
            out = f.result()
            if k + 1 < len(self.pools):
                self._stage(k + 1, out, done)
            else:
                done(out)
        fut.add_done_callback(next_)

    def drain(self):
        for p in self.pools:  # stage order: a later pool gets no new work once earlier ones are done
            p.shutdown(wait=True)


class RayRuntime:
    """One threaded actor per stage (max_concurrency = parallelism); a
    transaction is chained by handing each stage the previous ref."""

    name = "ray"

    def __init__(self, plan):
        import ray  # only here: the seam runs without Ray

        self.ray = ray
        ray.init()  # a job's driver: RAY_ADDRESS is set by the job

        @ray.remote(num_cpus=0)
        class StageActor:
            def __init__(self, plan, index):
                self.plan, self.index = plan, index

            def run(self, txn):
                return run_stage(self.plan, self.index, txn)

        self.actors = [StageActor.options(max_concurrency=s["parallelism"]).remote(plan, i)
                       for i, s in enumerate(plan["stages"])]
        self.pending = {}
        self.lock = threading.Lock()
        self.waiter = threading.Thread(target=self._wait, daemon=True)
        self.closed = False
        self.waiter.start()

    def info(self):
        return self.ray.__version__, dict(self.ray.cluster_resources())

    def submit(self, txn, done):
        ref = txn
        for a in self.actors:
            ref = a.run.remote(ref)
        with self.lock:
            self.pending[ref] = (done, txn)

    def _wait(self):
        while True:
            with self.lock:
                refs = list(self.pending)
                closed = self.closed
            if not refs:
                if closed:
                    return
                time.sleep(0.005)
                continue
            ready, _ = self.ray.wait(refs, num_returns=1, timeout=0.05)
            for ref in ready:
                with self.lock:
                    done, txn = self.pending.pop(ref)
                try:
                    out = self.ray.get(ref)
                except Exception as exc:  # an actor died: the transaction fails, the run goes on
                    out = dict(txn, failed=True, error=("%s: %s" % (type(exc).__name__, exc))[:MAX_ERROR])
                done(out)

    def drain(self):
        with self.lock:
            self.closed = True
        self.waiter.join()


# ---- driver ---------------------------------------------------------------


class Emitter:
    """Prints marked lines, one at a time."""

    def __init__(self, out):
        self.out, self.lock, self.count = out, threading.Lock(), 0

    def line(self, mark, obj):
        text = mark + json.dumps(obj, separators=(",", ":")) + "\n"
        with self.lock:
            self.out.write(text)
            self.out.flush()
            if mark == MARK_RECORD:
                self.count += 1


def drive(plan, runtime, out, sleep=time.sleep, lead_ns=50_000_000):
    """Delivers the plan's arrivals at their intended offsets from a zero
    lead_ns ahead, and emits every transaction's records as it ends."""
    em = Emitter(out)
    version, resources = runtime.info()
    zero = now() + lead_ns
    clock = Clock(zero)
    em.line(MARK_META, {"ray_version": version, "cluster_resources": resources, "start_unix_ns": zero,
                        "runtime": runtime.name})

    def done(txn):
        for rec in records(plan, clock, txn, now()):
            em.line(MARK_RECORD, rec)

    for a in plan["arrivals"]:
        intended = zero + a["offset_ns"]
        wait = intended - now()
        if wait > 0:
            sleep(wait / 1e9)
        txn = {"id": "txn-%06d" % a["seq"], "seq": a["seq"], "query": a["query"], "intended_unix": intended,
               "accepted": now(), "hops": []}
        runtime.submit(txn, done)
    runtime.drain()
    em.line(MARK_DONE, {"records": em.count})
    return em.count


def main(argv=None, out=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", default="plan.json")
    ap.add_argument("--runtime", choices=("ray", "local"),
                    default=os.environ.get("SAGEBENCH_RAY_RUNTIME", "ray"))
    args = ap.parse_args(argv)
    try:
        plan = load_plan(args.plan)
    except (OSError, ValueError) as exc:
        print("sagebench_ray: %s" % exc, file=sys.stderr)
        return 2
    runtime = RayRuntime(plan) if args.runtime == "ray" else LocalRuntime(plan)
    drive(plan, runtime, out or sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
