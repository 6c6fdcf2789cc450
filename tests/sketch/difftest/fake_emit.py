"""A stand-in for akg_cli in the runner's own tests: `sketch emit` prints a hand-written kernel.

    fake_emit.py sketch emit --backend cpu --dsl cpp FILE

Every other command goes to the real akg_cli ($FAKE_EMIT_REAL). The kernel for a sketch is looked
up by the sketch's name in the JSON object of $FAKE_EMIT_TABLE (name -> C++ source). With
$FAKE_EMIT_MISSING set, `sketch emit` answers as a build without it does (exit 2).
"""

from __future__ import annotations

import json
import os
import re
import sys


def main(argv: list) -> int:
    if argv[:2] != ["sketch", "emit"]:
        real = os.environ["FAKE_EMIT_REAL"]
        os.execv(real, [real, *argv])
    if os.environ.get("FAKE_EMIT_MISSING"):
        print("akg_cli sketch: unknown subcommand 'emit' (check or fmt)", file=sys.stderr)
        return 2
    path = argv[-1]
    with open(path, encoding="utf-8") as f:
        name = re.search(r"^sketch (\w+)", f.read(), re.M).group(1)  # type: ignore[union-attr]
    with open(os.environ["FAKE_EMIT_TABLE"], encoding="utf-8") as f:
        table = json.load(f)
    if name not in table:
        print(f"{path}: cannot lower sketch '{name}' (no kernel in the table)", file=sys.stderr)
        return 1
    sys.stdout.write(table[name])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
