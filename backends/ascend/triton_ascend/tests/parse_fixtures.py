"""Every fixture sketch lowered by `akg_cli sketch emit --backend B --dsl D` is Python that
parses (ast.parse), or is refused with the sketch's file:line:col. No runtime is needed: this is
what can be checked of a target whose device is not on the machine (Triton-Ascend's NPU,
TileLang's GPU). Prints the counts; fails when a module does not parse, a refusal names no
line, or fewer than --min-lowered lower.

usage: parse_fixtures.py AKG_CLI BACKEND DSL MIN_LOWERED DIR...
"""
import ast
import os
import re
import subprocess
import sys


def main(argv):
    cli, backend, dsl, min_lowered, dirs = argv[1], argv[2], argv[3], int(argv[4]), argv[5:]
    lowered, refused, bad = 0, 0, []
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if not name.endswith(".sketch"):
                continue
            path = os.path.join(d, name)
            p = subprocess.run([cli, "sketch", "emit", "--backend", backend, "--dsl", dsl, path],
                               capture_output=True, text=True, timeout=60)
            if p.returncode == 0:
                try:
                    ast.parse(p.stdout, filename=name + ".py")
                    lowered += 1
                except SyntaxError as e:
                    bad.append(f"{name}: the generated Python does not parse: {e}")
            elif re.search(r"sketch\.sketch:\d+:\d+: ", p.stderr):
                refused += 1
                print(f"refused {name}: {p.stderr.strip().splitlines()[-1]}")
            else:
                bad.append(f"{name}: refused without the sketch's line: {p.stderr.strip()[-300:]}")
    print(f"{backend}/{dsl}: {lowered} lowered and parsed, {refused} refused with their line")
    for b in bad:
        print("FAIL", b)
    if lowered < min_lowered:
        print(f"FAIL only {lowered} lowered (at least {min_lowered} expected)")
    return 1 if bad or lowered < min_lowered else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
