"""What judging costs: verify + profile wall time per operator, and the speedups, for one harness.

The kernels of a suite run (the run folders of an `akg_cli bench --output FILE` record) are
verified and profiled again, each with the protocol the engine uses (verify: 5 trials; profile:
5 warm-up calls, 50 timed), by the harness worker in HARNESS (its worker.py). Run it once with the
sandboxed judge of this tree and once with another harness (an older checkout's backends/harness)
on the same kernels to compare what the judge costs:

    /usr/bin/python3 bench/judge_cost.py --record bench.json --harness backends/harness --output new.json
    /usr/bin/python3 bench/judge_cost.py --record bench.json --harness /tmp/old/backends/harness --output old.json
    /usr/bin/python3 bench/judge_cost.py --compare old.json new.json

The machine's speed drifts over minutes on a shared host; ``--paired H2 --paired-output OUT2``
keeps both workers alive and judges every operator with one harness then the other (the order
alternating), so the drift falls on both alike; run it with the same harness on both sides for the
noise between two runs that differ in nothing.

One worker serves every operator, as in `akg_cli bench`; the first request pays the worker's start.
Requests go one at a time; the environment is the engine's (threads, OpenBLAS core type, passive
OpenMP waits). Times are wall clock around each request, so they include what the engine waits for.
``--gap S`` waits S seconds before each operator's verify, as the engine does while it designs and
builds the candidate (what a harness does meanwhile, such as starting a process, is then off the
clock, as it is in the engine); the gap itself is not counted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple


def engine_env(threads: int) -> Dict[str, str]:
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": str(threads), "AKG_THREADS": str(threads), "OMP_WAIT_POLICY": "passive",
                "OPENBLAS_THREAD_TIMEOUT": "4", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    flags = open("/proc/cpuinfo", encoding="utf-8").read()
    if " avx512f" in flags and " avx512bw" in flags and " avx512vl" in flags:
        env["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif " avx2" in flags and " fma" in flags:
        env["OPENBLAS_CORETYPE"] = "Zen" if "AuthenticAMD" in flags else "Haswell"
    return env


class Worker:
    def __init__(self, python: str, harness: str, threads: int) -> None:
        self.proc = subprocess.Popen([python, "-u", os.path.join(harness, "worker.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=engine_env(threads),
                                     cwd=harness)
        self.next_id = 0
        self.ready = self.read()

    def read(self) -> Dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("the worker ended")
        return json.loads(line)

    def ask(self, req: Dict[str, Any]) -> Dict[str, Any]:
        assert self.proc.stdin is not None
        self.next_id += 1
        req = dict(req, id=self.next_id)
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            msg = self.read()
            if msg.get("id") == self.next_id and "event" not in msg:
                return msg

    def close(self) -> None:
        try:
            self.ask({"op": "shutdown"})
        except (EOFError, BrokenPipeError):
            pass
        self.proc.wait(timeout=30)


def _operators(record: Dict[str, Any], record_path: str) -> List[Tuple[Dict[str, Any], str, str]]:
    """(op, reference path, kernel path) of every operator of the record that passed."""
    suite_root = os.path.dirname(os.path.abspath(record_path))
    found = []
    for op in record["ops"]:
        run_dir = op.get("run_dir")
        kernel = os.path.join(run_dir, "model_new.py") if run_dir else None
        if op.get("status") != "pass" or not kernel or not os.path.exists(kernel):
            continue
        ref = op["path"]
        if not os.path.isabs(ref):  # relative to where the suite ran: try the suite's parents
            suite = record.get("suite") or suite_root
            candidates = [os.path.join(d, ref) for d in (os.getcwd(), suite_root, suite, os.path.dirname(suite),
                                                          os.path.dirname(os.path.dirname(suite)))]
            ref = next((c for c in candidates if os.path.exists(c)), candidates[0])
        found.append((op, ref, kernel))
    return found


def judge_one(worker: Worker, op: Dict[str, Any], ref: str, kernel: str, gap: float, label: str) -> Dict[str, Any]:
    if gap > 0:
        time.sleep(gap)
    t0 = time.perf_counter()
    v = worker.ask({"op": "verify", "reference": ref, "kernel": kernel, "trials": 5, "seed": 0})
    t1 = time.perf_counter()
    p = worker.ask({"op": "profile", "reference": ref, "kernel": kernel, "warmup": 5, "runs": 50, "seed": 0})
    t2 = time.perf_counter()
    row = {"family": op["family"], "name": op["name"], "verify_ok": v.get("ok"), "verify_s": t1 - t0,
           "profile_ok": p.get("ok"), "profile_s": t2 - t1, "speedup": p.get("speedup"),
           "ref_ms": p.get("ref_ms"), "kernel_ms": p.get("kernel_ms"), "kernel_batch": p.get("kernel_batch"),
           "ref_timing": p.get("ref_timing"), "error": v.get("detail") if not v.get("ok") else p.get("detail")}
    print(f"{label}{op['family']}/{op['name']}: verify {row['verify_s']:.2f}s profile {row['profile_s']:.2f}s "
          f"speedup {row['speedup'] if row['speedup'] is None else round(row['speedup'], 3)}", file=sys.stderr)
    return row


def measure(args: argparse.Namespace) -> None:
    record = json.load(open(args.record, encoding="utf-8"))
    worker = Worker(args.python, os.path.abspath(args.harness), args.threads)
    rows = [judge_one(worker, op, ref, kernel, args.gap, "") for op, ref, kernel in _operators(record, args.record)]
    worker.close()
    out = {"harness": args.harness, "python": args.python, "threads": args.threads, "record": args.record,
           "gap_s": args.gap, "sandbox": worker.ready.get("sandbox"), "ops": rows}
    json.dump(out, open(args.output, "w", encoding="utf-8"), indent=1)


def measure_paired(args: argparse.Namespace) -> None:
    """Both harnesses alive at once, each operator judged by one then the other (the order
    alternating), so that the machine's drift falls on both alike."""
    record = json.load(open(args.record, encoding="utf-8"))
    sides = [(args.harness, args.output, args.gap), (args.paired, args.paired_output, args.paired_gap)]
    workers = [Worker(args.python, os.path.abspath(h), args.threads) for h, _, _ in sides]
    rows: List[List[Dict[str, Any]]] = [[], []]
    for i, (op, ref, kernel) in enumerate(_operators(record, args.record)):
        for s in ((0, 1) if i % 2 == 0 else (1, 0)):
            rows[s].append(judge_one(workers[s], op, ref, kernel, sides[s][2], f"[{s}] "))
    for s, (harness, output, gap) in enumerate(sides):
        workers[s].close()
        out = {"harness": harness, "python": args.python, "threads": args.threads, "record": args.record,
               "gap_s": gap, "paired_with": sides[1 - s][0], "sandbox": workers[s].ready.get("sandbox"),
               "ops": rows[s]}
        json.dump(out, open(output, "w", encoding="utf-8"), indent=1)


def geomean(values: List[float]) -> float:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def compare(old_path: str, new_path: str) -> None:
    old = {(r["family"], r["name"]): r for r in json.load(open(old_path, encoding="utf-8"))["ops"]}
    new = {(r["family"], r["name"]): r for r in json.load(open(new_path, encoding="utf-8"))["ops"]}
    keys = [k for k in new if k in old and old[k]["profile_ok"] and new[k]["profile_ok"]]
    ratio = [(new[k]["verify_s"] + new[k]["profile_s"]) / (old[k]["verify_s"] + old[k]["profile_s"]) for k in keys]
    first = keys[0] if keys else None
    print(f"operators compared: {len(keys)} (both judged and timed)")
    if first:
        rest = keys[1:]
        r2 = [(new[k]["verify_s"] + new[k]["profile_s"]) / (old[k]["verify_s"] + old[k]["profile_s"]) for k in rest]
        print(f"verify+profile per operator, new/old: median {statistics.median(r2):.2f}x, "
              f"max {max(r2):.2f}x, geomean {geomean(r2):.2f}x (the first operator, which pays the "
              f"worker's start, left out: {ratio[0]:.2f}x)")
        print(f"seconds per operator: old median {statistics.median(old[k]['verify_s'] + old[k]['profile_s'] for k in rest):.2f}, "
              f"new median {statistics.median(new[k]['verify_s'] + new[k]['profile_s'] for k in rest):.2f}")
    print(f"speedup geomean: old {geomean([old[k]['speedup'] for k in keys]):.3f}x, "
          f"new {geomean([new[k]['speedup'] for k in keys]):.3f}x")
    fam: Dict[str, List[Any]] = {}
    for k in keys:
        fam.setdefault(k[0], []).append(k)
    for f, ks in sorted(fam.items()):
        print(f"  {f}: old {geomean([old[k]['speedup'] for k in ks]):.3f}x, new {geomean([new[k]['speedup'] for k in ks]):.3f}x, "
              f"verify+profile new/old {geomean([(new[k]['verify_s'] + new[k]['profile_s']) / (old[k]['verify_s'] + old[k]['profile_s']) for k in ks]):.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", help="an akg_cli bench --output record whose run folders hold the kernels")
    parser.add_argument("--harness", default=os.path.join(os.path.dirname(__file__), "..", "backends", "harness"))
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--output")
    parser.add_argument("--gap", type=float, default=0.0,
                        help="seconds before each verify, standing for the engine's build of the candidate")
    parser.add_argument("--paired", metavar="HARNESS2", help="judge every operator with HARNESS2 too, alternating")
    parser.add_argument("--paired-output", metavar="OUT2", help="--paired: where HARNESS2's rows go")
    parser.add_argument("--paired-gap", type=float, default=0.0, help="--paired: --gap for HARNESS2")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return 0
    if not args.record or not args.output:
        parser.error("--record and --output are needed (or --compare OLD NEW)")
    if args.paired:
        if not args.paired_output:
            parser.error("--paired needs --paired-output")
        measure_paired(args)
    else:
        measure(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
