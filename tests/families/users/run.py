"""What akg does with operators written the ways users write them.

Runs `akg_cli op REF --trials 2 --output DIR` on every reference in refs/ (two at a time), reads
each report.json and prints one row per reference: passed (with the speedup), refused (the first
line of the message) or failed (the error class). Then it compares the outcomes with expect.json:

  - a reference expected to pass must pass;
  - a refusal or failure must have the expected class and carry the expected message substring,
    so every refusal is a test of its message;
  - an outcome better than expected (a refusal or failure that now passes) is "improved" and fails
    too: expect.json must stay true, so update it (--write-expect).

    python3 tests/families/users/run.py                    # run all, compare, exit 1 on a difference
    python3 tests/families/users/run.py --filter epi_,norm_
    python3 tests/families/users/run.py --write-expect     # run, then rewrite expect.json from the run
    python3 tests/families/users/run.py --rescan --work D  # read the reports already in D, run nothing

Exit status: 0 every outcome as expected (or expect.json written), 1 a difference, 2 a usage error.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
REFS = os.path.join(HERE, "refs")
EXPECT = os.path.join(HERE, "expect.json")
SEED = 20261201
RUN_TIMEOUT_S = 600

CATEGORIES = {
    "layer": "nn layers",
    "fn": "functional forms",
    "method": "tensor methods",
    "op": "operators",
    "chain": "chains",
    "epi": "GEMM/conv + epilogue",
    "dtype": "dtypes",
    "bcast": "broadcasting",
    "view": "views",
    "norm": "norms by hand",
    "misc": "where, logsumexp, var, pools, tuples",
}


def category(name: str) -> str:
    return CATEGORIES.get(name.split("_", 1)[0], "other")


def first_line(text: str, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


class Outcome:
    """One reference's result: kind is pass, refused or failed."""

    def __init__(self, name: str, kind: str, cls: str = "", message: str = "",
                 speedup: Optional[float] = None, seconds: float = 0.0):
        self.name = name
        self.kind = kind
        self.cls = cls
        self.message = message
        self.speedup = speedup
        self.seconds = seconds

    def cell(self) -> str:
        if self.kind == "pass":
            return "pass %.2fx" % self.speedup if self.speedup else "pass"
        if self.kind == "refused":
            return "refused: " + first_line(self.message, 110)
        return "failed: %s: %s" % (self.cls, first_line(self.message, 90))


def outcome_from_report(name: str, report: Optional[dict], note: str, seconds: float) -> Outcome:
    if report is None:
        return Outcome(name, "failed", "no_report", note, seconds=seconds)
    status = report.get("status")
    if status == "pass":
        speedup = (report.get("perf") or {}).get("speedup")
        return Outcome(name, "pass", speedup=speedup, seconds=seconds)
    error = report.get("error") or {}
    cls = error.get("class") or str(status)
    detail = scrub(error.get("detail") or "")
    # The Designer's or the Coder's "no" before any code ran: a refusal. Everything else
    # (a kernel that failed verification, a crash, a timeout) is a failure.
    if cls == "unsupported":
        return Outcome(name, "refused", cls, detail, seconds=seconds)
    return Outcome(name, "failed", cls, detail, seconds=seconds)


def scrub(text: str) -> str:
    """Paths that change from run to run (the work folder, the checkout) out of a message."""
    text = text.replace(REFS + os.sep, "").replace(SOURCE + os.sep, "")
    return re.sub(r"/tmp/[^\s:'\"]*/", "", text)


def run_one(cli: str, ref: str, work: str, trials: int, extra: List[str]) -> Outcome:
    name = os.path.basename(ref)[:-3]
    out = os.path.join(work, name)
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("AKG_HOME", SOURCE)
    cmd = [cli, "op", "--quiet", "--trials", str(trials), "--seed", str(SEED), "--output", out,
           "--store", os.path.join(work, name + ".db"), *extra, ref]
    started = time.monotonic()
    note = ""
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env, timeout=RUN_TIMEOUT_S)
        note = "akg_cli exit %d: %s" % (proc.returncode, first_line(proc.stderr[-2000:]))
    except subprocess.TimeoutExpired:
        note = "akg_cli ran past %d s" % RUN_TIMEOUT_S
    with open(os.path.join(work, name + ".cmd"), "w") as f:
        f.write(" ".join(cmd) + "\n")
    return outcome_from_report(name, read_report(out), note, time.monotonic() - started)


def read_report(out: str) -> Optional[dict]:
    path = os.path.join(out, "report.json")
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError:
        return None


def expected_entry(o: Outcome):
    """What expect.json records for an outcome: "pass", or the class and a stable message part."""
    if o.kind == "pass":
        return "pass"
    return {"outcome": o.kind, "class": o.cls, "message": stable_part(o)}


def stable_part(o: Outcome) -> str:
    """A substring of the message that the same engine gives on every run. A refusal: its first
    line up to the advice that follows "; as written", less the count of other uncovered ops. A
    failure: the longest stretch of its first line without digits (errors, seeds and timings
    move from run to run; the words that say what went wrong do not)."""
    line = first_line(o.message, 100000)
    if o.kind == "failed":
        pieces = [p.strip(" (:,;=[]'") for p in re.split(r"[-+.\d]*\d[-+.\de]*", line)]
        line = max(pieces, key=len) if pieces else line
    else:
        # the op, its line and the reason; not how many other ops are uncovered, nor the advice
        line = line.split("; as written")[0]
        line = re.sub(r"; \d+ more operations? (is|are) not covered", "", line)
    if len(line) > 140:
        cut = line.rfind(" ", 0, 140)
        line = line[: cut if cut > 40 else 140]
    return line.rstrip(" (:,;=")


def compare(o: Outcome, want) -> Optional[str]:
    """None when the outcome is what expect.json says; otherwise why not."""
    if want is None:
        return "not in expect.json (add it: --write-expect)"
    if want == "pass":
        if o.kind == "pass":
            return None
        return "regressed: expected pass, got " + o.cell()
    if o.kind == "pass":
        return "improved — update expect.json (expected %s %s, now passes)" % (
            want.get("outcome"), want.get("class"))
    if o.kind != want.get("outcome") or o.cls != want.get("class"):
        return "changed: expected %s %s, got %s" % (want.get("outcome"), want.get("class"), o.cell())
    if want.get("message", "") not in o.message:
        return "changed message: expected it to contain %r, got %r" % (
            want.get("message"), first_line(o.message, 200))
    return None


def print_table(outcomes: List[Outcome], verdicts: Dict[str, Optional[str]]) -> None:
    width = max([len(o.name) for o in outcomes] + [9])
    print("%-*s  %-8s  %s" % (width, "reference", "check", "outcome"))
    for o in outcomes:
        v = verdicts.get(o.name)
        check = "-" if o.name not in verdicts else ("ok" if v is None else "DIFF")
        print("%-*s  %-8s  %s" % (width, o.name, check, o.cell()))
    by_cat: Dict[str, List[Outcome]] = {}
    for o in outcomes:
        by_cat.setdefault(category(o.name), []).append(o)
    print()
    print("%-38s %5s %7s %7s %6s" % ("category", "refs", "pass", "refused", "failed"))
    for cat, rows in by_cat.items():
        print("%-38s %5d %7d %7d %6d" % (cat, len(rows), sum(r.kind == "pass" for r in rows),
                                         sum(r.kind == "refused" for r in rows),
                                         sum(r.kind == "failed" for r in rows)))
    passed = sum(o.kind == "pass" for o in outcomes)
    refused = sum(o.kind == "refused" for o in outcomes)
    print("\npass rate: %d/%d (%.0f%%); refused %d, failed %d" % (
        passed, len(outcomes), 100.0 * passed / max(1, len(outcomes)), refused,
        len(outcomes) - passed - refused))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--akg-cli", default=os.environ.get("AKG_CLI") or os.path.join(SOURCE, "build", "akg_cli"))
    ap.add_argument("--filter", default="", help="comma-separated substrings of reference names")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--work", default="", help="folder for the run folders (default: a new temporary one)")
    ap.add_argument("--write-expect", action="store_true", help="rewrite expect.json from this run")
    ap.add_argument("--rescan", action="store_true", help="read the reports in --work, run nothing")
    ap.add_argument("--results", default="", help="also write the outcomes as JSON to this file")
    ap.add_argument("extra", nargs="*", help="after --: more akg_cli op flags")
    args = ap.parse_args()

    refs = sorted(os.path.join(REFS, f) for f in os.listdir(REFS) if f.endswith(".py"))
    filters = [s for s in args.filter.split(",") if s]
    if filters:
        refs = [r for r in refs if any(s in os.path.basename(r) for s in filters)]
    if not refs:
        print("no reference matches %r" % args.filter, file=sys.stderr)
        return 2
    if args.rescan and not args.work:
        print("--rescan needs --work", file=sys.stderr)
        return 2
    if not args.rescan and not os.access(args.akg_cli, os.X_OK):
        print("akg_cli not found at %s (--akg-cli or AKG_CLI)" % args.akg_cli, file=sys.stderr)
        return 2
    work = args.work or tempfile.mkdtemp(prefix="akg-users-")
    print("akg_cli %s; run folders in %s" % (args.akg_cli, work), flush=True)

    outcomes: Dict[str, Outcome] = {}
    if args.rescan:
        for r in refs:
            name = os.path.basename(r)[:-3]
            outcomes[name] = outcome_from_report(name, read_report(os.path.join(work, name)),
                                                 "no report in " + work, 0.0)
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_one, args.akg_cli, r, work, args.trials, args.extra) for r in refs]
            for fut in concurrent.futures.as_completed(futures):
                o = fut.result()
                outcomes[o.name] = o
                print("  %-32s %5.1f s  %s" % (o.name, o.seconds, o.cell()), flush=True)
    ordered = [outcomes[os.path.basename(r)[:-3]] for r in refs]

    expect: Dict[str, object] = {}
    if os.path.exists(EXPECT):
        with open(EXPECT) as f:
            expect = json.load(f)

    if args.results:
        with open(args.results, "w") as f:
            json.dump({o.name: {"kind": o.kind, "class": o.cls, "message": o.message,
                                "speedup": o.speedup, "seconds": round(o.seconds, 1)}
                       for o in ordered}, f, indent=1, ensure_ascii=False)

    if args.write_expect:
        for o in ordered:
            expect[o.name] = expected_entry(o)
        known = {os.path.basename(r)[:-3] for r in os.listdir(REFS) if r.endswith(".py")}
        expect = {k: expect[k] for k in sorted(expect) if k in known}
        with open(EXPECT, "w") as f:
            json.dump(expect, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print_table(ordered, {})
        print("wrote %s (%d references)" % (EXPECT, len(expect)))
        return 0

    verdicts = {o.name: compare(o, expect.get(o.name)) for o in ordered}
    print()
    print_table(ordered, verdicts)
    diffs = [(n, v) for n, v in verdicts.items() if v is not None]
    if diffs:
        print("\n%d of %d differ from expect.json:" % (len(diffs), len(ordered)))
        for n, v in diffs:
            print("  %s: %s" % (n, v))
        return 1
    print("every outcome as expected (%d references)" % len(ordered))
    return 0


if __name__ == "__main__":
    sys.exit(main())
