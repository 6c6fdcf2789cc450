"""Benchmark: how long a warm harness worker takes to verify and profile one
elementwise candidate (issue 2's latency goal: under 2 s).

It builds a ReLU kernel with `akg_cli op --workflow kernelgen_only`, starts
the real worker (backends/harness/worker.py) over pipes, warms it with one
verify+profile of that candidate, then times N more verify+profile pairs of
the same request sequence the engine sends (5 trials, 5 warm-up, 50 runs).

    /usr/bin/python3 bench/warm_worker.py [--rounds 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reference", default=os.path.join(ROOT, "tests/fixtures/refs/relu.py"))
    ap.add_argument("--cli", default=os.environ.get("AKG_CLI", os.path.join(ROOT, "build/akg_cli")))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="akg-warm-")
    env = dict(os.environ, AKG_STORE=os.path.join(tmp, "akg.db"))
    out = os.path.join(tmp, "kernel")
    subprocess.run([args.cli, "op", "--quiet", "--workflow", "kernelgen_only", "--output", out,
                    args.reference], check=True, env=env, stdout=subprocess.DEVNULL)
    kernel = os.path.join(out, "model_new.py")
    worker = subprocess.Popen([sys.executable, "-u", os.path.join(ROOT, "backends/harness/worker.py")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    t0 = time.perf_counter()
    ready = json.loads(worker.stdout.readline())
    startup = time.perf_counter() - t0
    ids = iter(range(1, 1_000_000))

    def call(req):
        req["id"] = next(ids)
        worker.stdin.write(json.dumps(req) + "\n")
        worker.stdin.flush()
        ans = json.loads(worker.stdout.readline())
        while "event" in ans:  # progress lines come before the answer
            ans = json.loads(worker.stdout.readline())
        if not ans.get("ok"):
            raise SystemExit(f"harness answered: {ans}")
        return ans

    def round_trip(seed):
        t = time.perf_counter()
        call({"op": "verify", "reference": args.reference, "kernel": kernel, "trials": 5, "seed": seed})
        call({"op": "profile", "reference": args.reference, "kernel": kernel, "warmup": 5, "runs": 50,
              "seed": seed})
        return time.perf_counter() - t

    cold = round_trip(1)
    warm = [round_trip(2 + i) for i in range(args.rounds)]
    call({"op": "shutdown"})
    worker.wait(timeout=30)
    print(f"worker start (import torch): {startup:.2f} s; torch {ready.get('torch')}, "
          f"threads {ready.get('threads')}")
    print(f"first verify+profile (modules loaded): {cold:.3f} s")
    print(f"warm verify+profile: median {statistics.median(warm):.3f} s, "
          f"max {max(warm):.3f} s over {len(warm)} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
