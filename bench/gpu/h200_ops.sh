#!/bin/bash
# Runs akg_cli op for every operator of the given bench/ops families on an NVIDIA GPU, one job per
# operator, JOBS at a time, and writes a summary (summary.json, summary.txt) and the run folders
# (runs.tgz) to OUT. Run from the repository root on the GPU machine, with the binaries of
# scripts/device-bundle.sh in devbundle/ (that machine has no libuv, cJSON, tree-sitter or
# libyaml) and its python3 holding PyTorch and Triton. No bubblewrap there: candidates run in
# the harness's child processes without an operating-system sandbox (--sandbox none).
#
#   bench/gpu/h200_ops.sh OUT DSL "activation reduction norm loss" [JOBS]
set -u
out=${1:?OUT}; dsl=${2:?DSL}; families=${3:?FAMILIES}; jobs=${4:-6}
root=$(pwd)
export LD_LIBRARY_PATH="$root/devbundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export AKG_HOME="$root" AKG_PYTHON=${AKG_PYTHON:-python3} PYTHONUNBUFFERED=1
mkdir -p "$out" /tmp/akg-runs
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
"$AKG_PYTHON" -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__, torch.cuda.get_device_name())' | tee -a "$out/gpu.txt"
refs=()
for f in $families; do refs+=(bench/ops/$f/*.py); done
one() {
    ref=$1; name=$(basename "$(dirname "$ref")")_$(basename "$ref" .py)
    timeout "${OP_TIMEOUT:-300}" "$root/devbundle/bin/akg_cli" op --backend cuda --dsl "$dsl" --sandbox none \
        --trials 3 --min-speedup 0 --store "/tmp/akg-runs/$name.db" --output "/tmp/akg-runs/$name" \
        --quiet "$ref" > "/tmp/akg-runs/$name.log" 2>&1
    echo "$name exit $?"
}
export -f one; export root dsl
printf '%s\n' "${refs[@]}" | timeout "${DEADLINE:-420}" xargs -P "$jobs" -I{} bash -c 'one {}'
"$AKG_PYTHON" - "$out" <<'PY'
import glob, json, math, os, sys
out = sys.argv[1]
rows = []
for rep in sorted(glob.glob("/tmp/akg-runs/*/report.json")):
    r = json.load(open(rep))
    p = r.get("perf") or {}
    rows.append({"op": os.path.basename(os.path.dirname(rep)), "status": r.get("status"),
                 "error": (r.get("error") or {}).get("class"), "detail": ((r.get("error") or {}).get("detail") or "")[:300],
                 "ref_ms": p.get("ref_ms"), "kernel_ms": p.get("kernel_ms"), "speedup": p.get("speedup")})
for log in sorted(glob.glob("/tmp/akg-runs/*.log")):
    name = os.path.basename(log)[:-4]
    if not any(x["op"] == name for x in rows):
        rows.append({"op": name, "status": "no report", "detail": open(log).read()[-300:]})
ok = [x for x in rows if x["status"] == "pass"]
sp = [x["speedup"] for x in ok if x.get("speedup")]
summary = {"operators": len(rows), "passed": len(ok), "pass_rate": len(ok) / max(len(rows), 1),
           "geomean_speedup": math.exp(sum(map(math.log, sp)) / len(sp)) if sp else None, "rows": rows}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
with open(os.path.join(out, "summary.txt"), "w") as f:
    for x in rows:
        f.write(f"{x['op']:36s} {x['status']:10s} {x.get('speedup') or 0:7.3f} {x.get('error') or ''} {x.get('detail','')[:160]}\n")
    f.write(f"passed {len(ok)}/{len(rows)}, geomean speedup {summary['geomean_speedup']}\n")
print(open(os.path.join(out, "summary.txt")).read())
PY
tar czf "$out/runs.tgz" -C /tmp akg-runs
