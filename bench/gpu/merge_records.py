"""Merges GPU bench runs into one record of bench/results/<date>-h200-<dsl>.json.

A session on the lent GPU runs the suite in several calls (each within the device's per-call
limit), each writing an `akg_cli bench --output` JSON. This folds them, and optionally an earlier
record of the same DSL, into the record's format: pass rate (of the suite and of what ran),
geomean speedup against eager and against torch.compile, fast_1, per family, the GPU and its
versions, and every row. An operator judged in several inputs keeps its best outcome (a pass over
a failure, a failure over a run cut by the deadline); among passes, the later input's row.

    python3 bench/gpu/merge_records.py --dsl cuda --what "..." --out bench/results/D-h200-cuda.json \
        [--record bench/results/EARLIER.json] RUN1.json RUN2.json ...

--suite-ops N counts the suite's operators (92 for bench/ops) so that operators no input ran are
counted as not run.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Dict, List, Optional

KEEP = ("family", "name", "status", "error_class", "ref_ms", "kernel_ms", "speedup", "compiled_ms",
        "speedup_compiled", "scaled", "elapsed_s")
RANK = {"pass": 3, "fail": 2, "error": 2, "not_run": 0, "cancelled": 0}


def geomean(values: List[float]) -> Optional[float]:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def row_of(op: Dict[str, Any]) -> Dict[str, Any]:
    row = {k: op.get(k) for k in KEEP}
    detail = op.get("error_detail")
    if detail and op.get("status") != "pass":
        row["error_detail"] = detail[:240]
    for k in ("ref_ms", "kernel_ms", "speedup", "compiled_ms", "speedup_compiled", "elapsed_s"):
        if isinstance(row[k], float):
            row[k] = round(row[k], 4)
    return row


def summary(rows: List[Dict[str, Any]], count: int) -> Dict[str, Any]:
    passed = [r for r in rows if r["status"] == "pass"]
    ran = [r for r in rows if RANK.get(r["status"], 1) > 0]
    eager = [r["speedup"] for r in passed if r.get("speedup")]
    compiled = [r["speedup_compiled"] for r in passed if r.get("speedup_compiled")]
    unsupported = sum(1 for r in rows if r.get("error_class") == "unsupported")

    def rounded(x: Optional[float]) -> Optional[float]:
        return round(x, 4) if x is not None else None
    return {"ops": count, "passed": len(passed), "unsupported": unsupported,
            "failed_other": len(ran) - len(passed) - unsupported, "not_run": count - len(ran),
            "pass_rate": round(len(passed) / count, 4) if count else None,
            "pass_rate_of_run": round(len(passed) / len(ran), 4) if ran else None,
            "geomean_speedup": rounded(geomean(eager)), "geomean_vs_compile": rounded(geomean(compiled)),
            "fast_1": round(sum(1 for x in eager if x > 1.0) / count, 4) if count else None,
            "fast_1_vs_compile": round(sum(1 for x in compiled if x > 1.0) / count, 4) if count else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsl", required=True)
    parser.add_argument("--what", required=True, help="one paragraph: what ran, and what did not and why")
    parser.add_argument("--out", required=True)
    parser.add_argument("--record", help="an earlier record of this DSL whose rows are merged too")
    parser.add_argument("--suite-ops", type=int, default=0, help="operators in the suite (default: those seen)")
    parser.add_argument("--date", help="the record's date (default: the first run's)")
    parser.add_argument("--session-command", action="append", default=[],
                        help="the command run on the device for an input (repeatable)")
    parser.add_argument("runs", nargs="+", help="akg_cli bench --output files")
    args = parser.parse_args()

    best: Dict[tuple, Dict[str, Any]] = {}
    commands: List[str] = []
    earlier = json.load(open(args.record, encoding="utf-8")) if args.record else None
    inputs = ([("record", r) for r in earlier["rows"]] if earlier else [])
    runs = [json.load(open(p, encoding="utf-8")) for p in args.runs]
    for run in runs:
        inputs += [("run", op) for op in run["ops"]]
        cmd = run.get("command") or ""
        if "--output " in cmd:
            cmd = cmd.replace(cmd.split("--output ")[1].split()[0], f"OUT/bench-{args.dsl}.json")
        commands.append(cmd)
    for _, op in inputs:
        key = (op["family"], op["name"])
        row = row_of(op)
        old = best.get(key)
        if old is None or RANK.get(row["status"], 1) >= RANK.get(old["status"], 1):
            best[key] = row
    rows = [best[k] for k in sorted(best)]
    count = max(args.suite_ops, len(rows))
    env = runs[0].get("environment") or {}
    gpu = env.get("gpu_info") or {}
    record: Dict[str, Any] = {
        "date": args.date or (runs[0].get("started_at") or "")[:10],
        "dsl": args.dsl, "what": args.what,
        "gpu": (f'{gpu.get("name")} ({gpu.get("sms")} SMs, {int(gpu.get("memory_bytes") or 0) >> 30} GiB), '
                f'driver {gpu.get("driver")}') if gpu else (earlier or {}).get("gpu"),
        "versions": {"torch": env.get("torch"), "cuda": gpu.get("cuda"), "triton": gpu.get("triton"),
                     "python": env.get("python")},
        "peaks_measured": {"fp32_tflops": round(gpu.get("peak_fp32_tflops") or 0, 1),
                           "bf16_tflops": round(gpu.get("peak_bf16_tflops") or 0, 1),
                           "copy_tbps": round(gpu.get("copy_tbps") or 0, 2)} if gpu else (earlier or {}).get("peaks_measured"),
        "size_scale": runs[0].get("size_scale"),
        "sandbox": "none (no bubblewrap on that machine)",
        "timings_comparable_with_jobs_1": all((r.get("jobs") or 1) == 1 for r in runs),
        **summary(rows, count),
        "per_family": {},
        "commands": (earlier or {}).get("commands", []) + commands,
        "session_commands": (earlier or {}).get("session_commands", []) + args.session_command,
        "setup": "scripts/device-bundle.sh BUILD (carried as devbundle/), run from the repository root on the device",
        "rows": rows,
    }
    for fam in sorted({r["family"] for r in rows}):
        fam_rows = [r for r in rows if r["family"] == fam]
        record["per_family"][fam] = summary(fam_rows, len(fam_rows))
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print(json.dumps({k: record[k] for k in ("ops", "passed", "unsupported", "failed_other", "not_run",
                                              "pass_rate", "pass_rate_of_run", "geomean_speedup",
                                              "geomean_vs_compile", "fast_1")}))
    for fam, s in record["per_family"].items():
        print(f"  {fam}: {s['passed']}/{s['ops']} passed, geomean {s['geomean_speedup']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
