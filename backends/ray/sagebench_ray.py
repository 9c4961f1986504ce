#!/usr/bin/env python3
"""sagebench's Ray driver: Q1's embed -> retrieve -> generate on Ray.

sagebench (`run --backend ray`) uploads this file, sagebench_http.py and
plan.json as the job's working_dir and runs
`python3 sagebench_ray.py --plan plan.json`. The plan holds the target,
the stages with their own settings and concurrency, and every arrival
(intended offset, query), so this driver sends the same arrivals as the
sage backend.

Each stage is one threaded Ray actor whose max_concurrency is the stage's
parallelism, with a keep-alive connection pool to the target of that
size. Before the schedule starts, every actor is created and answers
ready with its pool warmed; the schedule's zero is set only then, so no
arrival waits for a worker to start. A SAGEBENCH_META line says when the
stages were ready and how (the warm-up), then a transaction's stages are
chained by passing object refs, and every finished transaction is
printed as sagebench records (the requests.jsonl schema), one
"SAGEBENCH_RECORD <json>" line each, which sagebench reads back from the
job's log.

Only the Runtime differs between Ray and the test seam (LocalRuntime: one
thread pool per stage, same concurrency, same pools and readiness): plan
reading, the schedule, the HTTP calls and the records are the same code.
SAGEBENCH_RAY_RUNTIME=local selects the seam.
"""

import argparse
import concurrent.futures
import json
import os
import socket
import sys
import threading
import time

from sagebench_http import MAX_ERROR, CallFailed, Pool, classify, exchange, now, read_json, read_stream

PLAN_VERSION = 2
MARK_RECORD = "SAGEBENCH_RECORD "
MARK_META = "SAGEBENCH_META "
MARK_DONE = "SAGEBENCH_DONE "
OPS = ("embed", "retrieve", "generate")
MAX_RETRIEVED = 256  # document ids a retrieve record keeps (top_k is at most this in practice)
STAGE_TYPE = {"embed": "embedding", "retrieve": "retrieve", "generate": "llm"}
USER_AGENT = "sagebench-ray-driver/%d" % PLAN_VERSION
LEAD_NS = 5_000_000  # the zero is this far after readiness: time to print the META line


class PlanError(ValueError):
    """The plan file is unusable."""


def load_plan(path):
    """Reads and checks the plan sagebench wrote."""
    with open(path, encoding="utf-8") as f:
        return check_plan(json.load(f))


def check_plan(plan):
    """Checks a plan and fills its defaults."""
    if plan.get("version") != PLAN_VERSION:
        raise PlanError("plan version %r: this driver reads %d" % (plan.get("version"), PLAN_VERSION))
    for key in ("target", "stages", "arrivals", "embedding_model", "llm_model"):
        if not plan.get(key):
            raise PlanError("plan: %s is missing or empty" % key)
    plan.setdefault("request_timeout_s", 60)
    plan.setdefault("ready_timeout_s", 120)
    plan.setdefault("headers", {})
    if plan.get("api_key_env") and not os.environ.get(plan["api_key_env"]):
        raise PlanError("plan: the target's API key is to come from $%s, which the job's environment does not hold"
                        % plan["api_key_env"])
    ops = [s.get("op") for s in plan["stages"]]
    if tuple(ops) != OPS:
        raise PlanError("plan: stages run %s; Q1 runs %s" % (ops, list(OPS)))
    for s in plan["stages"]:
        check_stage(plan, s)
    last = -1
    for a in plan["arrivals"]:
        if a["offset_ns"] < last:
            raise PlanError("plan: arrival %d is earlier than the one before" % a["seq"])
        last = a["offset_ns"]
    return plan


def check_stage(plan, s):
    """Checks one stage's own settings and fills its defaults."""
    name = s.get("name")
    if int(s.get("parallelism", 0)) < 1:
        raise PlanError("plan: stage %s: parallelism must be >= 1" % name)
    need = {"generate": "max_tokens", "retrieve": "top_k"}.get(s["op"])
    if need and int(s.get(need, 0)) < 1:
        raise PlanError("plan: stage %s: %s must be >= 1" % (name, need))
    if s["op"] != "retrieve":
        s.setdefault("model", plan["embedding_model"] if s["op"] == "embed" else plan["llm_model"])
    s["warm_conns"] = min(max(int(s.get("warm_conns", 0)), 0), s["parallelism"])
    s["timeout_s"] = s.get("timeout_s") or plan["request_timeout_s"]


# ---- one stage ------------------------------------------------------------


def base_headers(plan):
    h = {"Content-Type": "application/json", "X-Request-Type": "rag", "User-Agent": USER_AGENT}
    h.update(plan.get("headers") or {})
    if plan.get("api_key_env"):  # the target's key: from the job's environment, never the plan
        h["Authorization"] = "Bearer " + os.environ[plan["api_key_env"]]
    if plan.get("tenant"):
        h["X-Tenant-Id"] = plan["tenant"]
    return h


class Stage:
    """One stage's worker state: its settings and its connection pool.
    A Ray actor (RayRuntime) or a thread pool (LocalRuntime) holds one."""

    def __init__(self, plan, index):
        self.plan, self.spec = plan, plan["stages"][index]
        self.name, self.op = self.spec["name"], self.spec["op"]
        self.pool = Pool(plan["target"], self.spec["parallelism"], self.spec["timeout_s"])
        self.node = socket.gethostname()  # the Ray node this stage's calls leave from

    def ready(self):
        """Warms the pool; says how it went."""
        warmed = self.pool.warm(self.spec["warm_conns"], base_headers(self.plan), self.plan["ready_timeout_s"])
        return {"stage": self.name, "wanted": self.spec["warm_conns"], "warmed": warmed, "node": self.node}

    def headers(self, txn):
        h = base_headers(self.plan)
        if self.plan.get("deadline_ms", 0) > 0:
            left = self.plan["deadline_ms"] - (now() - txn["intended_unix"]) // 1_000_000
            h["X-SLO-Deadline-Ms"] = str(max(left, 1))
        return h

    def call(self, path, body, txn, read):
        """One call: its timing, headers and outcome, and what read made of
        the answer (None when it failed)."""
        c = new_call(self.name)
        try:
            conn, resp = exchange(self.pool, path, body, self.headers(txn), c)
            out = read(conn, resp, c)
            c["end"] = c["end"] or now()
            c["ok"] = True
            return c, out
        except Exception as exc:  # every failure becomes the call's class
            fail(c, exc)
            return c, None

    def decode(self, conn, resp, c):
        out = read_json(self.pool, conn, resp)
        if not isinstance(out, dict):
            raise CallFailed("malformed", c["status"], "%s: the answer is not a JSON object" % self.name)
        if out.get("error") is not None:
            raise CallFailed("stream_error", c["status"], "target reported an error: %s" % str(out["error"])[:200])
        return out

    def embed(self, txn):
        c, out = self.call("/v1/embeddings", {"model": self.spec["model"], "input": [txn["query"]]}, txn, self.decode)
        if c["ok"]:
            try:
                txn["vector"] = out["data"][0]["embedding"]
                c["prompt_tokens"] = (out.get("usage") or {}).get("prompt_tokens", 0)
                if not txn["vector"] or len(out["data"]) != 1:
                    raise ValueError("%d embeddings for 1 input" % len(out["data"]))
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                fail(c, CallFailed("malformed", c["status"], "embeddings: %s" % exc))
        return c

    def retrieve(self, txn):
        c, out = self.call("/v1/retrieve", {"embedding": txn.pop("vector", None), "top_k": self.spec["top_k"]}, txn, self.decode)
        if c["ok"]:
            if not isinstance(out.get("data"), list):
                fail(c, CallFailed("malformed", c["status"], "retrieve: response has no data array"))
            else:
                txn["hits"] = [d.get("text", "") if isinstance(d, dict) else "" for d in out["data"]]
                # the documents' ids, for recall@k (sagebench's Q1 checks them against exact search)
                c["retrieved_ids"] = [d["id"] if isinstance(d, dict) and type(d.get("id")) is int else -1
                                      for d in out["data"][:MAX_RETRIEVED]]
        return c

    def generate(self, txn):
        mt = self.spec["max_tokens"]
        msgs = prompt(txn)
        body = {"model": self.spec["model"], "max_tokens": mt, "stream": True,
                "stream_options": {"include_usage": True}, "messages": msgs}
        c, _ = self.call("/v1/chat/completions", body, txn,
                         lambda conn, resp, c: read_stream(self.pool, conn, resp, c, mt))
        if txn.get("hits"):
            # the messages sent, for sagebench to count as the stage's
            # input_tokens as on sage (with the run's chat template when
            # it has one); not kept in requests.jsonl
            c["prompt"] = msgs
        return c

    def run(self, txn):
        """Runs this stage of txn: enqueued is when the stage before ended
        (or the source accepted it); a failed transaction passes through."""
        if txn.get("failed"):
            return txn
        hops = txn["hops"]
        enqueued = hops[-1]["ended"] if hops else txn["accepted"]
        started = now()
        try:
            c = getattr(self, self.op)(txn)
        except Exception as exc:  # a bug in the stage, not the call: keep the transaction
            c = new_call(self.name)
            fail(c, CallFailed("stage_error", 0, "stage %s: %s" % (self.name, exc)))
        hops.append({"stage": self.name, "op": self.op, "model": self.spec.get("model", ""), "enqueued": enqueued,
                     "started": started, "ended": now(), "call": c, "node": self.node})
        txn["failed"] = not c["ok"]
        return txn


def new_call(stage):
    return {"stage": stage, "sent": 0, "first_byte": 0, "first_token": 0, "first_answer_token": 0, "end": 0,
            "tokens": [], "token_count": 0, "tokens_dropped": 0, "status": 0, "ok": False, "error_class": "",
            "error": "", "engine": "", "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}


def fail(c, exc):
    c["end"] = c["end"] or now()
    c["ok"] = False
    c["error_class"], status = classify(exc)
    c["status"] = status or c["status"]
    c["error"] = ("%s: %s" % (type(exc).__name__, exc))[:MAX_ERROR]


def prompt(txn):
    ctx = "".join("[%d] %s\n" % (i + 1, h) for i, h in enumerate(txn.get("hits", [])))
    return [{"role": "system", "content": "Answer the question using only the numbered context passages; cite them as [n]."},
            {"role": "user", "content": "Context:\n" + ctx + "\nQuestion: " + txn["query"]}]


# ---- records --------------------------------------------------------------


def ms(ns):
    return ns / 1e6


class Clock:
    """Offsets from the schedule's zero; 0 stays "did not happen"."""

    def __init__(self, zero):
        self.zero = zero

    def off(self, t):
        return max(t - self.zero, 1) if t else 0


def fill_call(rec, clock, frm, c, stage):
    """Copies a call's timing into rec as sagebench's Q1 does (fillCall in
    internal/workload/q1/records.go), latencies counted from frm; a stage
    record also gets what the target said of the call (queue wait, its
    own timing, notes) and the first answer token."""
    rec.update(sent_ns=clock.off(c["sent"]), first_byte_ns=clock.off(c["first_byte"]),
               first_token_ns=clock.off(c["first_token"]), service_ms=ms(c["end"] - c["sent"]),
               lag_ms=ms(c["sent"] - frm), status=c["status"], engine=c["engine"], retries=c["retries"],
               prompt_tokens=c["prompt_tokens"], completion_tokens=c["completion_tokens"])
    if c["tokens"]:
        rec["token_ns"] = [clock.off(t) for t in c["tokens"]]
        rec["token_ns_dropped"] = c["tokens_dropped"]
    if c["first_token"]:
        rec["ttft_ms"] = ms(c["first_token"] - frm)
        n = len(c["tokens"])  # the tokens actually timed, never a usage count
        if n > 1:
            rec["tpot_ms"] = ms(c["tokens"][-1] - c["first_token"]) / (n - 1)
    if not stage:
        return
    for k in ("queue_ms", "server_ttft_ms", "server_e2e_ms", "note"):
        if k in c:
            rec[k] = c[k]
    if c["first_answer_token"]:
        rec.update(first_answer_token_ns=clock.off(c["first_answer_token"]), ttfat_ms=ms(c["first_answer_token"] - frm))


def stage_record(plan, clock, txn, hop):
    tid = txn["id"]
    rec = {"id": tid + "/" + hop["stage"], "seq": txn["seq"], "kind": "stage", "type": STAGE_TYPE[hop["op"]],
           "stage": hop["stage"], "txn_id": tid, "tenant": plan.get("tenant", ""), "model": hop.get("model", ""),
           "node": hop.get("node", ""),
           "intended_ns": clock.off(hop["enqueued"]), "end_ns": clock.off(hop["ended"]),
           "e2e_ms": ms(hop["ended"] - hop["enqueued"]), "status": 0, "ok": False, "slo_met": False}
    c = hop["call"]
    if c["ok"]:
        fill_call(rec, clock, hop["enqueued"], c, True)
        rec["ok"] = True
        if "retrieved_ids" in c:
            rec["retrieved_ids"] = c["retrieved_ids"]
        if "prompt" in c:
            rec["prompt"] = c["prompt"]
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
        fill_call(tr, clock, intended, gen[0], False)
        tr.update(keep, first_byte_ns=0)
    if txn.get("failed"):
        last = txn["hops"][-1]["call"] if txn["hops"] else {"error_class": "stage_error", "status": 0,
                                                             "error": txn.get("error", "the pipeline lost it")}
        tr.update(error_class=last["error_class"], error=last["error"], status=last["status"])
    return [compact(r) for r in [tr] + stages]


def compact(rec):
    """Drops empty optional fields, as Go's omitempty does (queue_ms is a
    pointer there: 0 is a value, kept)."""
    keep = {"id", "seq", "kind", "type", "intended_ns", "sent_ns", "end_ns", "e2e_ms", "service_ms",
            "lag_ms", "status", "ok", "slo_met", "queue_ms"}
    return {k: v for k, v in rec.items() if k in keep or v not in (0, "", [], None)}


# ---- runtimes -------------------------------------------------------------


class LocalRuntime:
    """The test seam: one thread pool per stage, max_workers = the
    stage's parallelism, each with its Stage; stage k+1 is submitted when
    stage k ends. start() starts every worker thread and warms every pool
    before it returns, as RayRuntime awaits its actors."""

    name = "local"

    def __init__(self, plan):
        self.plan = plan
        self.stages = [Stage(plan, i) for i in range(len(plan["stages"]))]
        self.pools = [concurrent.futures.ThreadPoolExecutor(max_workers=s["parallelism"]) for s in plan["stages"]]

    def info(self):
        return "", {}

    def start(self):
        """Every worker thread running and every pool warmed; per stage
        how it went, with when it was ready (ns)."""
        out = []
        for st, pool in zip(self.stages, self.pools):
            n = st.spec["parallelism"]
            gate = threading.Barrier(n + 1, timeout=self.plan["ready_timeout_s"])
            for _ in range(n):  # a worker thread each: they are started lazily otherwise
                pool.submit(gate.wait)
            gate.wait()
            warm = pool.submit(st.ready).result(self.plan["ready_timeout_s"])
            out.append((warm, now()))
        return out

    def submit(self, txn, done):
        self._stage(0, txn, done)

    def _stage(self, k, txn, done):
        fut = self.pools[k].submit(self.stages[k].run, txn)

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
        for st in self.stages:
            st.pool.close()


class RayRuntime:
    """One threaded actor per stage (max_concurrency = parallelism), each
    holding its Stage. start() creates the actors and waits until each has
    answered ready with its pool warmed.

    A transaction's next stage is submitted only once its stage before has
    ended (the waiter sees its ref ready), never ahead with a pending ref:
    Ray runs an actor's tasks in submission order when max_concurrency is
    1 (SequentialActorSubmitQueue), so a task submitted early would hold
    back later transactions whose input is ready (head-of-line blocking
    that sage's queues do not have). The ready ref is passed on, not its
    value; the driver also fetches each stage's result, the transaction's
    history so far, so a stage that fails (its actor died: Ray hands every
    stage a deserialised copy, and the dead one's is lost) still reports
    the stages before it."""

    name = "ray"

    def __init__(self, plan, ray=None):
        if ray is None:
            import ray  # only here: the seam runs without Ray

            ray.init()  # a job's driver: RAY_ADDRESS is set by the job
        self.ray, self.plan = ray, plan

        @ray.remote(num_cpus=0)
        class StageActor:
            def __init__(self, plan, index):
                self.stage = Stage(plan, index)

            def ready(self):
                return self.stage.ready()

            def run(self, txn):
                return self.stage.run(txn)

            def close(self):
                self.stage.pool.close()

        self.actors = [StageActor.options(max_concurrency=s["parallelism"]).remote(plan, i)
                       for i, s in enumerate(plan["stages"])]
        self.pending = {}  # ref → (done, the transaction as last seen, the stage it runs)
        self.lock = threading.Lock()
        self.closed = False
        self.waiter = None

    def info(self):
        return self.ray.__version__, dict(self.ray.cluster_resources())

    def start(self):
        """Waits for every actor's ready answer (its creation, its pool
        warmed); per stage how it went, with when it came (ns)."""
        refs = {a.ready.remote(): i for i, a in enumerate(self.actors)}
        out = [None] * len(refs)
        deadline = time.monotonic() + self.plan["ready_timeout_s"]
        while refs:
            left = deadline - time.monotonic()
            ready, _ = self.ray.wait(list(refs), num_returns=1, timeout=max(left, 0))
            if not ready:
                raise RuntimeError("stages not ready within %ss: %s" % (
                    self.plan["ready_timeout_s"], ", ".join(self.plan["stages"][i]["name"] for i in refs.values())))
            for ref in ready:
                out[refs.pop(ref)] = (self.ray.get(ref), now())
        self.waiter = threading.Thread(target=self._wait, daemon=True)
        self.waiter.start()
        return out

    def submit(self, txn, done):
        ref = self.actors[0].run.remote(txn)
        with self.lock:
            self.pending[ref] = (done, txn, 0)

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
            # Returns as soon as one is ready (at most 10 ms, so refs submitted
            # meanwhile join soon), then takes every other ready one too.
            ready, _ = self.ray.wait(refs, num_returns=1, timeout=0.01)
            if ready and len(refs) > 1:
                ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                with self.lock:
                    done, txn, k = self.pending.pop(ref)
                self._advance(ref, done, txn, k)

    def _advance(self, ref, done, txn, k):
        """Stage k of txn ended (ref ready): submit its next stage, or end it."""
        try:
            out = self.ray.get(ref)
        except Exception as exc:  # an actor died: the transaction fails with its history, the run goes on
            stage = self.plan["stages"][k]
            c = new_call(stage["name"])
            fail(c, CallFailed("stage_error", 0, ("%s: %s" % (type(exc).__name__, exc))[:MAX_ERROR]))
            t = now()
            hops = txn["hops"]
            txn = dict(txn, failed=True, hops=hops + [{
                "stage": stage["name"], "op": stage["op"], "model": stage.get("model", ""),
                "enqueued": hops[-1]["ended"] if hops else txn["accepted"], "started": t, "ended": t,
                "call": c, "node": ""}])
            done(txn)
            return
        if out.get("failed") or k + 1 == len(self.actors):
            done(out)
            return
        nxt = self.actors[k + 1].run.remote(ref)
        with self.lock:
            self.pending[nxt] = (done, out, k + 1)

    def drain(self):
        with self.lock:
            self.closed = True
        if self.waiter is not None:
            self.waiter.join()
        try:
            self.ray.get([a.close.remote() for a in self.actors], timeout=10)
        except Exception:  # an actor that died has no connections left to close
            pass


# ---- driver ---------------------------------------------------------------


class Emitter:
    """Prints marked lines; a transaction's lines together."""

    def __init__(self, out):
        self.out, self.lock, self.count = out, threading.Lock(), 0

    def lines(self, mark, objs):
        text = "".join(mark + json.dumps(o, separators=(",", ":")) + "\n" for o in objs)
        with self.lock:
            self.out.write(text)
            self.out.flush()
            if mark == MARK_RECORD:
                self.count += len(objs)


def warmup(started, stages):
    """The META line's account of the start-up."""
    return {"started_unix_ns": started,
            "stages": [dict(w, ready_ms=ms(at - started)) for w, at in stages]}


def drive(plan, runtime, out, sleep=time.sleep, lead_ns=LEAD_NS):
    """Gets the stages ready, sets the schedule's zero lead_ns after that,
    delivers the plan's arrivals at their intended offsets from it, and
    emits every transaction's records as it ends."""
    em = Emitter(out)
    version, resources = runtime.info()
    started = now()
    stages = runtime.start()
    ready = now()
    zero = ready + lead_ns
    clock = Clock(zero)
    em.lines(MARK_META, [{"ray_version": version, "cluster_resources": resources, "ready_unix_ns": ready,
                          "start_unix_ns": zero, "warmup": warmup(started, stages), "runtime": runtime.name}])

    def done(txn):
        em.lines(MARK_RECORD, records(plan, clock, txn, now()))

    for a in plan["arrivals"]:
        intended = zero + a["offset_ns"]
        wait = intended - now()
        if wait > 0:
            sleep(wait / 1e9)
        txn = {"id": "txn-%06d" % a["seq"], "seq": a["seq"], "query": a["query"], "intended_unix": intended,
               "accepted": now(), "hops": []}
        runtime.submit(txn, done)
    runtime.drain()
    em.lines(MARK_DONE, [{"records": em.count}])
    return em.count


def main(argv=None, out=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", default="plan.json")
    ap.add_argument("--runtime", choices=("ray", "local"),
                    default=os.environ.get("SAGEBENCH_RAY_RUNTIME", "ray"))
    args = ap.parse_args(argv)
    try:
        plan = load_plan(args.plan)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print("sagebench_ray: %s" % exc, file=sys.stderr)
        return 2
    runtime = RayRuntime(plan) if args.runtime == "ray" else LocalRuntime(plan)
    drive(plan, runtime, out or sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
