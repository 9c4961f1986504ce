"""Run a command and report its client cost: CPU seconds (user + system,
of the process and every descendant it waited for) and peak RSS (the sum
over the process tree, sampled every 0.2 s), as one JSON line on fd 3
(or stderr when fd 3 is not open). The command's own output passes through.

    python bench/peers/measure.py OUT.json -- cmd args...
"""
import json
import os
import resource
import subprocess
import sys
import time


def tree_rss_kb(root):
    """Sum of VmRSS over root and its descendants, from /proc."""
    kids, rss = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss[int(pid)] = int(line.split()[1])
                        break
            kids.setdefault(ppid, []).append(int(pid))
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(kids.get(p, []))
    return total


def main():
    out, cmd = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_kb(proc.pid))
        time.sleep(0.2)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = {"rc": proc.returncode, "wall_s": round(time.monotonic() - t0, 3),
           "cpu_s": round(ru.ru_utime + ru.ru_stime, 3), "peak_rss_mb": round(peak / 1024, 1),
           "loadavg": open("/proc/loadavg").read().split()[:3]}
    with open(out, "w") as f:
        json.dump(res, f)
    sys.exit(proc.returncode)


main()
