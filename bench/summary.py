"""Markdown tables of `akg_cli bench` records, as the README shows them.

    /usr/bin/python3 bench/summary.py families RUN.json [RUN2.json ...]
    /usr/bin/python3 bench/summary.py ops RUN.json [RUN2.json ...]

Each record is one run of the suite (`akg_cli bench --output`). With several, each gets its own
columns, labelled by its torch version, and with `--compiled` runs a torch.compile column too.
`families`: pass count, fast_1, fast_1.5 and geomean per family, and the totals line. `ops`: per
operator the reference and kernel medians and the speedups. Numbers are read from the records
as bench computed them; nothing is recomputed here but the labels.
"""
import json
import sys
from typing import Any, Dict, List, Optional


def load(path: str) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        record = json.load(f)
    if record.get("refused"):
        sys.exit(f"{path}: speedups were refused: {record['refused']}")
    return record


def label(record: Dict[str, Any]) -> str:
    """"torch 1.13", "torch 2.15": the major and minor version of the run's PyTorch."""
    torch = str(record.get("environment", {}).get("torch", "?")).split("+")[0]
    return "torch " + ".".join(torch.split(".")[:2])


def pct(v: Optional[float]) -> str:
    return "-" if v is None else f"{100.0 * v:.0f}%"


def times(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f}x"


def ms(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.3f}"


def baselines(record: Dict[str, Any]) -> List[str]:
    return ["eager", "compiled"] if record.get("compiled") else ["eager"]


def totals(record: Dict[str, Any], which: str) -> Dict[str, Any]:
    return record["totals"] if which == "eager" else record["totals_compiled"]


def per_family(record: Dict[str, Any], which: str) -> Dict[str, Any]:
    return record["per_family"] if which == "eager" else record["per_family_compiled"]


def families(records: List[Dict[str, Any]]) -> None:
    head = ["family", "ops", "pass"]
    cols = []
    for r in records:
        for which in baselines(r):
            name = label(r) + (" compile" if which == "compiled" else " eager")
            cols.append((r, which))
            head += [f"fast_1 ({name})", f"geomean ({name})"]
    print("| " + " | ".join(head) + " |")
    print("| --- | " + " | ".join("---:" for _ in head[1:]) + " |")
    first = records[0]
    for fam, t0 in first["per_family"].items():
        row = [fam, str(t0["ops"]), str(t0["passed"])]
        for r, which in cols:
            t = per_family(r, which).get(fam, {})
            row += [pct(t.get("fast_1")), times(t.get("geomean_speedup"))]
        print("| " + " | ".join(row) + " |")
    row = ["**all**", str(first["totals"]["ops"]), str(first["totals"]["passed"])]
    for r, which in cols:
        t = totals(r, which)
        row += [f"**{pct(t.get('fast_1'))}**", f"**{times(t.get('geomean_speedup'))}**"]
    print("| " + " | ".join(row) + " |")


def ops(records: List[Dict[str, Any]]) -> None:
    head = ["family", "op"]
    for r in records:
        head += [f"{label(r)} ms", "akg ms", "speedup"]
        if r.get("compiled"):
            head += ["compile ms", "vs compile"]
    print("| " + " | ".join(head) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in head[2:]) + " |")
    index = [{(o["family"], o["name"]): o for o in r["ops"]} for r in records]
    for o0 in records[0]["ops"]:
        key = (o0["family"], o0["name"])
        row = list(key)
        for r, ix in zip(records, index):
            o = ix.get(key, {})
            row += [ms(o.get("ref_ms")), ms(o.get("kernel_ms")), times(o.get("speedup"))]
            if r.get("compiled"):
                compiled = ms(o.get("compiled_ms")) if o.get("compiled_ms") is not None else "failed"
                row += [compiled, times(o.get("speedup_compiled"))]
        print("| " + " | ".join(row) + " |")


def main(argv: List[str]) -> int:
    if len(argv) < 3 or argv[1] not in ("families", "ops"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    records = [load(p) for p in argv[2:]]
    (families if argv[1] == "families" else ops)(records)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
