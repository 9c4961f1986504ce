#!/usr/bin/env python3
"""The sage-vs-Ray table of docs/ray.md from a bench/ray/compare.sh
output directory: per backend, goodput at the SLO and SLO attainment (mean
and range over the repetitions), transaction E2E p50/p99 over all
transactions pooled with 95 % bootstrap intervals (2,000 resamples,
seeded), per-stage time p50 (stage records: queueing + service in the
runtime, hand-off included), lag p99, and the CPU seconds and peak RSS
per transaction from resources.txt. Standard library only.

    python3 bench/ray/table.py results-ray
"""
import glob
import json
import os
import random
import re
import sys


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def boot(xs, p, rng, n=2000):
    est = sorted(pct([rng.choice(xs) for _ in xs], p) for _ in range(n))
    return est[int(0.025 * n)], est[int(0.975 * n) - 1]


def metric(run, name):
    for m in run["result"]["metrics"]:
        if m["name"] == name:
            return m["value"] if m["state"] == "measured" else None
    return None


def backend(out, name, rng):
    runs, e2e, stages, lag = [], [], {}, []
    for d in sorted(glob.glob(os.path.join(out, "q1", "q1-%s-*" % name))):
        run = json.load(open(os.path.join(d, "run.json")))
        runs.append(run)
        for line in open(os.path.join(d, "requests.jsonl")):
            r = json.loads(line)
            if r["kind"] == "txn" and r["ok"]:
                e2e.append(r["e2e_ms"])
                lag.append(r.get("lag_ms", 0))
            elif r["kind"] == "stage" and r["ok"]:
                stages.setdefault(r["stage"], []).append(r["e2e_ms"])
    g = [metric(r, "goodput") for r in runs]
    a = [metric(r, "txn_slo_attainment") for r in runs]
    rec = [metric(r, "recall_at_k") for r in runs]
    row = {"runs": len(runs), "txns": len(e2e), "hash": {r.get("workload_hash", "")[:12] for r in runs},
           "goodput": (sum(g) / len(g), min(g), max(g)), "attain": sum(a) / len(a),
           "p50": (pct(e2e, 50),) + boot(e2e, 50, rng), "p99": (pct(e2e, 99),) + boot(e2e, 99, rng),
           "stages": {k: pct(v, 50) for k, v in stages.items()}, "lag99": pct(lag, 99),
           "recall": None if None in rec else sum(rec) / len(rec)}
    return row


def resources(out):
    res = {}
    for line in open(os.path.join(out, "resources.txt")):
        m = re.match(r"(\w+): sagebench process cpu_s=([\d.]+) cluster cpu_s=([\d.]+) peak_rss_mb=(\d+) transactions=(\d+)", line)
        if m:
            res[m.group(1)] = [float(x) for x in m.groups()[1:]]
    return res


def main(out):
    rng = random.Random(42)
    rows = {b: backend(out, b, rng) for b in ("sage", "ray")}
    res = resources(out)
    f = lambda v: "%.0f" % v
    print("| | sage | Ray |\n|---|---|---|")
    print("| runs × transactions | %d × %d | %d × %d |" % tuple(x for b in rows.values() for x in (b["runs"], b["txns"] // max(b["runs"], 1))))
    print("| workload_hash | %s | %s |" % tuple(",".join(sorted(b["hash"])) for b in rows.values()))
    print("| goodput at the 2 s SLO, tx/s (mean [min, max]) | %s | %s |" % tuple(
        "%.2f [%.2f, %.2f]" % b["goodput"] for b in rows.values()))
    print("| SLO attainment | %s | %s |" % tuple("%.1f %%" % (100 * b["attain"]) for b in rows.values()))
    for p in ("p50", "p99"):
        print("| E2E %s ms [95 %% CI] | %s | %s |" % ((p,) + tuple("%s [%s, %s]" % tuple(map(f, b[p])) for b in rows.values())))
    for st in ("embed", "retrieve", "generate"):
        print("| %s stage p50 ms | %s | %s |" % ((st,) + tuple("%.1f" % b["stages"].get(st, float("nan")) for b in rows.values())))
    print("| driver lag p99 ms | %s | %s |" % tuple("%.1f" % b["lag99"] for b in rows.values()))
    for b in ("sage", "ray"):
        if b in res:
            proc, cl, rss, n = res[b]
            rows[b]["cpu"] = ("%.1f" % (1000 * proc / n)) if b == "sage" else ("%.1f + %.1f" % (1000 * proc / n, 1000 * cl / n))
            rows[b]["rss"] = "%d" % rss
    print("| CPU ms per transaction (sagebench process [+ Ray cluster]) | %s | %s |" % tuple(rows[b].get("cpu", "-") for b in ("sage", "ray")))
    print("| peak RSS MB (sagebench process [+ Ray cluster]) | %s | %s |" % tuple(rows[b].get("rss", "-") for b in ("sage", "ray")))
    print("| recall@5 | %s | %s |" % tuple("not measured" if b["recall"] is None else "%.3f" % b["recall"] for b in rows.values()))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results-ray")
