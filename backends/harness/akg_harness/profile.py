"""The profile request: one timing protocol for every DSL (README.md, "profile").

Reference and kernel are timed alike: each in a child process of its own (the candidate's
sandboxed child, candidate.py; the reference child, which loads the reference's ``Model``), in
batches of the same number of back-to-back calls, each call on an input set no call had before
(a drawn set with every tensor rotated by a random offset: the window of a doubled copy the judge
wrote into the child's input region once, read in place), timed on the judge's clock from its
"go" to the child's "done" less that child's measured call overhead. The sides alternate in
segments, reference then kernel: a batch of untimed settling calls (SWITCH_SETTLE_MS of the side's
time) that absorbs what the other side left behind (its memory traffic, a thread pool to wake),
then SEGMENT_BATCHES timed batches. A settling call's outputs are freed as it returns, so the first
timed call writes where it wrote; a batch's timed outputs stay alive until it ends (any of them may
be read), within KEEP_BYTES. Nothing of the protocol differs between the sides but the module
loaded, so neither pays for the other's traffic or process.

The kernel's side adds what a hostile candidate needs (KernelTimer): 1 to 4 verification-style
calls first, a random sample of timed calls checked against the reference, the child's CPU time
between its batches (``background_work``), and speedups too good to trust verified again
(``flags``). A reference that cannot run in a child (it reads a file next to it that is not
staged, say) is timed by the judge itself, in blocks of ROTATING_SETS calls with an untimed
first, and ``ref_timing`` says so and why.

With ``"compiled": true`` a third contestant joins: the reference under ``torch.compile`` (PyTorch 2),
compiled by its first call before the warm-up and then timed by the judge in blocks between the
other two. A reference that does not compile, or a torch without ``torch.compile``, leaves the eager
timing and the kernel's untouched and says why in ``compiled_error``.
"""

from __future__ import annotations

import math
import os
import random
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from .candidate import BACKGROUND_WORK, CandidateProcess, Judge, _collect, window_step
from .compare import compare_outputs, fp64_rule_passes, quick_match, reduction_sizes
from .env import WorkerEnv
from .inputs import SEED_STRIDE, clone_args, draw_cases, to_double
from .loading import Registry, call_user
from .models import Contest, build_contest, output_sizes, reference_child, run_kernel_checked, run_reference
from .protocol import NUMERICAL_MISMATCH, RUNTIME_ERROR, HarnessError
from .verify import int_field, optional_float

ROTATING_SETS = 4
# The candidate is timed in batches of back-to-back calls worth about BATCH_MS of its time (at most
# MAX_BATCH calls, BATCH_BYTES of inputs and outputs, KEEP_BYTES of outputs), at least MIN_BATCHES
# of them; MIN_SAMPLED (or a fifth) of the batches have one call checked against the reference.
BATCH_MS = 2.0
MAX_BATCH = 256
PROBE_BATCH = 16
BATCH_BYTES = 256 << 20
# The timed calls' outputs all stay alive until their batch ends (the judge reads any of them),
# so each call after the first writes memory that nothing wrote just before, where an eager
# program's allocator would hand an operator the block its predecessor freed, still in cache.
# Outputs of many megabytes written cold cost memory-bound kernels 20-50% on this kind of machine
# (bench/judge-check/README.md); a batch's outputs are kept within about a core's share of cache.
KEEP_BYTES = 4 << 20
# On a GPU neither the cores' caches nor the host's memory bound a batch: each call's inputs are
# copied to the device before the batch and its outputs read after it, untimed. A batch of one call
# there is timed mostly by the launch, the synchronisation and the pipe (0.25 ms against a 0.08 ms
# kernel on an H200), so batches are longer, within device memory the kept outputs and input copies
# of several workers' children fit in.
BATCH_MS_GPU = 8.0
BATCH_BYTES_GPU = 6 << 30
KEEP_BYTES_GPU = 2 << 30
MIN_BATCHES = 5
MIN_SAMPLED = 3
# CPU time the child may spend outside its timed batches. Between batches (after its last answer,
# before the next command) an honest child sleeps in a read: BACKGROUND_IDLE_NS in all, plus
# BACKGROUND_IDLE_PER_BATCH_NS per batch and BACKGROUND_IDLE_SHARE of its CPU time inside the calls
# for thread pools going to sleep (honest kernels of the suite used up to 33 ms against 480 ms). Taking a batch's inputs
# and describing its outputs costs Python time: BACKGROUND_BASE_NS + BACKGROUND_PER_BATCH_NS per
# batch + BACKGROUND_PER_CALL_NS per call. More is background work (a thread computing ahead, or
# finishing late, or spinning).
BACKGROUND_IDLE_NS = 5_000_000
BACKGROUND_IDLE_PER_BATCH_NS = 200_000
BACKGROUND_IDLE_SHARE = 0.1  # ... plus a tenth of its CPU time inside the calls (pools settling)
# ... and, past BACKGROUND_IDLE_NS, never more than this share of the wall time between its batches
# (honest kernels of the suite: at most 7%; a thread busy a quarter of the time: 25%)
BACKGROUND_IDLE_MAX_SHARE = 0.15
BACKGROUND_BASE_NS = 20_000_000
BACKGROUND_PER_BATCH_NS = 1_000_000
BACKGROUND_PER_CALL_NS = 100_000
# ... and on a GPU, per byte of a call's inputs, their copy to the device before "ready" (2 ns a
# byte: 0.5 GB/s, far below any host-to-device link)
BACKGROUND_GPU_COPY_NS_PER_BYTE = 2
# On a GPU a timed batch ends when its calls are done on the device; then the outputs the judge
# reads (the checked calls', else the last call's, named only after "done") reach the host in a
# phase the judge times apart; the others stay on the device (copying a batch's gigabytes to
# pageable memory took longer than the batch and its noise was charged as excess). The kernel is
# charged what its copy takes beyond COPY_SLACK times the reference's copy of the same outputs (per
# copied call, median) plus COPY_ALLOWANCE_NS a batch: work deferred from the calls into the copy
# is paid for. Without a reference child, the allowance is BACKGROUND_GPU_COPY_NS_PER_BYTE a byte.
COPY_SLACK = 1.5
COPY_ALLOWANCE_NS = 200_000
SUSPICIOUS_SPEEDUP = 10.0
ROOFLINE_MIN_BYTES = 32 << 20
ROOFLINE_MARGIN = 1.5
REVERIFY_TRIALS = 2
# A batch's untimed first call may take this many times a timed call, plus the slack, before the
# judge concludes the kernel computed ahead.
SETTLE_FACTOR = 8.0
SETTLE_SLACK_NS = 10_000_000
# The sides alternate in segments: a batch that only settles (calls worth SWITCH_SETTLE_MS of the
# side's time, at least one; its timing dropped), then SEGMENT_BATCHES timed batches in a row. On a
# 2-core Xeon VM a side timed right after the other side's batch ran up to 2x slower for several
# calls, paying for the other's memory traffic, while one untimed call absorbed a pause of the same
# length (bench/judge-check/README.md, "Segments"); after calls worth 8 ms the difference was gone.
SEGMENT_BATCHES = 8
SWITCH_SETTLE_MS = 8.0
L2_FLUSH_BYTES = 256 << 20
# A batch of the reference takes at most about this long (its batches are as long as the kernel's
# in calls, but not longer than this when the reference is much slower)
REF_BATCH_MS = 50.0
# Bytes of input sets a child's region holds doubled for rotations (at least one set)
WINDOW_BYTES = 1 << 30
MAX_RUNS = 100_000


def percentile(sorted_values: List[float], q: float) -> float:
    """Linear interpolation between closest ranks; ``q`` in [0, 1]."""
    if not sorted_values:
        return 0.0
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class Timer:
    """Times one call in milliseconds on the worker's device."""

    def __init__(self, env: WorkerEnv) -> None:
        self.env = env
        self._flush: Optional[torch.Tensor] = None
        if env.is_cuda:
            self._flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=env.device)

    def time_ms(self, call: Callable[[], Any], keep: Optional[List[Any]] = None) -> float:
        """Milliseconds of one call; its result goes to ``keep`` (alive until the caller drops it)."""
        if self._flush is None:
            start = time.perf_counter_ns()
            out = call()
            elapsed = (time.perf_counter_ns() - start) / 1e6
            if keep is not None:
                keep.append(out)
            return elapsed
        self._flush.zero_()
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        begin.record()
        call()
        end.record()
        torch.cuda.synchronize(self.env.device)
        return float(begin.elapsed_time(end))


def _summary(prefix: str, times: List[float]) -> Dict[str, float]:
    ordered = sorted(times)
    return {
        f"{prefix}_ms": percentile(ordered, 0.5),
        f"{prefix}_ms_p10": percentile(ordered, 0.1),
        f"{prefix}_ms_p90": percentile(ordered, 0.9),
    }


def compiled_vec_isa() -> Optional[str]:
    """The SIMD instruction set inductor's C++ backend generates for ("avx2", "avx512", ...), or
    "none" when its probe found none usable (it then writes scalar loops)."""
    try:
        from torch._inductor import cpu_vec_isa  # PyTorch 2.3 and later
    except ImportError:
        return None
    try:
        return str(cpu_vec_isa.pick_vec_isa()) or "none"
    except Exception:  # noqa: BLE001 - a failing probe is reported as no vectorisation
        return "none"


def compile_reference(model: Any, path: str, args: List[Any]) -> Tuple[Optional[Any], float, Optional[str]]:
    """``torch.compile(model)`` compiled by one call on ``args``: (compiled or None, seconds, error)."""
    compile_fn = getattr(torch, "compile", None)
    if compile_fn is None:
        return None, 0.0, f"torch {torch.__version__} has no torch.compile (PyTorch 2 is needed)"
    # Inductor picks its SIMD set by loading a probe library in a child Python that must resolve
    # ATen's vector math (Sleef) from libtorch; PyPI's torch loads libtorch privately unless this
    # is set, the probe then fails and every compiled kernel is scalar. The child inherits it.
    os.environ.setdefault("TORCH_USE_RTLD_GLOBAL", "1")
    start = time.perf_counter()
    try:
        compiled = compile_fn(model)
        with torch.no_grad():
            compiled(*args)
    except Exception as exc:  # noqa: BLE001 - any failure to compile is reported, never fatal
        last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return None, time.perf_counter() - start, f"torch.compile of {path} failed: {type(exc).__name__}: {text}{where}"[:600]
    return compiled, time.perf_counter() - start, None


def _rolled(args: List[Any], roll: List[int]) -> List[Any]:
    """``args`` with tensor i's elements rolled by ``roll[i]`` (what the child receives)."""
    it = iter(roll)

    def one(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            k = next(it)
            if k and value.numel() > 1:
                return torch.roll(value.contiguous().reshape(-1), -k).reshape(value.shape)
            return value.clone()
        if isinstance(value, list):
            return [one(v) for v in value]
        if isinstance(value, tuple):
            return tuple(one(v) for v in value)
        return value

    return [one(a) for a in args]


def _bytes_of(args: List[Any]) -> int:
    total = 0
    for a in args:
        if isinstance(a, torch.Tensor):
            total += a.numel() * a.element_size()
        elif isinstance(a, (list, tuple)):
            total += _bytes_of(list(a))
    return total


class KernelTimer:
    """Times the candidate in its child, in batches of ``k`` back-to-back calls on fresh inputs.

    Every call gets an input set no call has had before: one of the drawn sets with each tensor's
    elements rolled by a random offset. A random sample of the calls (and every one of the first
    ``pre`` verification-style calls, whose number is itself random) is checked against the
    reference on the very inputs the child got; a timed call is indistinguishable from a checked
    one until after it returned.

    With ``reference`` the same timer times the reference in its own child (trusted: nothing is
    checked, no CPU time is accounted), so that both sides are timed by one protocol.
    """

    def __init__(self, contest: Contest, bases: List[List[Any]], env: WorkerEnv, atol: Optional[float],
                 rtol: Optional[float], reference: Optional[CandidateProcess] = None,
                 expect: Optional[List[int]] = None) -> None:
        self.contest = contest
        self.reference = reference is not None
        self.child = reference if reference is not None else contest.child
        self.bases = bases
        self.env = env
        self.atol, self.rtol = atol, rtol
        self.rng = random.SystemRandom()
        self.checked = 0
        self.check_s = 0.0       # the judge's time checking sampled calls against the reference
        self.calls = 0
        self.cpu_inside = 0      # CPU time of the child inside its timed batches
        self.cpu_handling = 0    # ... preparing batches and describing outputs
        self.cpu_idle = 0        # ... between its batches, where an honest child sleeps
        self.last_cpu_end: Optional[int] = None
        self.wall_idle = 0       # the judge's wall time between the child's batches
        self.last_wall_end = 0
        self.batches = 0
        self.cpu_measured = True
        self.in_bytes = _bytes_of(bases[0])
        # every input set twice in a row in the child's input region, once: a call's inputs are
        # then rotations of a set read in place (as many sets as WINDOW_BYTES allows)
        self.win_bases = bases[:max(1, min(len(bases), WINDOW_BYTES // max(2 * self.in_bytes, 1)))]
        self.win_tensors: List[List[torch.Tensor]] = []
        for args in self.win_bases:
            tensors: List[torch.Tensor] = []
            _collect(args, tensors)
            self.win_tensors.append(tensors)
        self.child.write_windows(self.win_bases)
        if expect is None:
            first = run_reference(contest.reference, contest.ref_model, clone_args(bases[0], env.device), env)
            expect = output_sizes(first)
        self.expect = expect
        self.out_bytes = sum(self.expect)
        self.copy_per_call: List[float] = []  # ns per call of each batch's copy phase (GPU)
        self.copy_charged = 0                 # ns of copy phase charged to the kernel's batches
        self.copy_reference: Optional["KernelTimer"] = None  # whose copies set the allowance

    def copy_allowed(self, k: int) -> int:
        """Nanoseconds a batch may spend copying ``k`` calls' outputs to the host."""
        ref = self.copy_reference
        if ref is not None and ref.copy_per_call:
            ordered = sorted(ref.copy_per_call)
            return int(COPY_SLACK * k * percentile(ordered, 0.5)) + COPY_ALLOWANCE_NS
        return k * self.out_bytes * BACKGROUND_GPU_COPY_NS_PER_BYTE + COPY_ALLOWANCE_NS

    def _variant(self) -> Tuple[int, List[int]]:
        """A set no call had before: one of the window sets, each tensor rotated by a random
        multiple of its window step."""
        b = self.rng.randrange(len(self.win_bases))
        rolls = []
        for t in self.win_tensors[b]:
            step = window_step(t)
            rolls.append(step * self.rng.randrange(t.numel() // step) if t.numel() >= 2 * step else 0)
        return b, rolls

    def _check(self, base: List[Any], roll: List[int], out: List[Any], call: int) -> None:
        inputs = _rolled(base, roll)  # fresh tensors the reference may have (only sizes are read later)
        ref_out = run_reference(self.contest.reference, self.contest.ref_model,
                                clone_args(inputs, self.env.device) if self.env.device.type != "cpu" else inputs,
                                self.env)
        if self.env.device.type != "cpu":
            out = [t.to(self.env.device) if isinstance(t, torch.Tensor) else t for t in out]
        where = f"timed call {call} (fresh inputs)"
        reduced = reduction_sizes(inputs, ref_out)
        if quick_match(ref_out, out, self.atol, self.rtol, reduced):
            return
        result = compare_outputs(ref_out, out, self.atol, self.rtol, where, reduced)
        if result.ok:
            return
        if result.error_class == NUMERICAL_MISMATCH and result.tolerance_failures and not result.hard_failure:
            try:
                ref64 = run_reference(self.contest.reference, self.contest.ref64(),
                                      to_double(clone_args(_rolled(base, roll), self.env.device)), self.env)
            except HarnessError:
                ref64 = []
            if fp64_rule_passes(ref_out, ref64, out, self.atol, self.rtol, result.tolerance_failures, reduced):
                return
        raise HarnessError(result.error_class or NUMERICAL_MISMATCH,
                           f"{result.detail or 'outputs differ'}: the kernel passed verification but computes "
                           "something else while it is being timed", where="kernel")

    def batch(self, k: int, check: Optional[List[int]] = None, settle: int = 0, counted: bool = True) -> float:
        """Runs ``k`` timed calls as one batch, after ``settle`` untimed ones (the first call of a
        block absorbs what ran before: the reference's dirty lines); returns milliseconds per timed
        call (the child's call overhead, measured before the candidate was loaded, taken off once).
        ``check`` indexes the batch's calls, settling ones first; only timed calls can be checked
        (a settling call's outputs are let go as it returns). A batch that is not ``counted`` (a
        segment's first, which only settles) is not held to the settling rule: work moved from
        its timed calls into its settling ones would gain the kernel nothing."""
        drawn = [self._variant() for _ in range(settle + k)]
        written = self.child.window_inputs(self.win_bases, drawn)  # windows: nothing is written
        variants = [(self.win_bases[b], rolls) for b, rolls in drawn]
        check = check or []
        started = time.perf_counter_ns()
        result = self.child.call([v[0] for v in variants], check=check, expect=self.expect,
                                 settle=settle, prepared=written, windowed=True)
        c0 = time.perf_counter()
        for b in check:
            self._check(variants[b][0], variants[b][1], result.outs[b], self.calls + b)
            self.checked += 1
        self.check_s += time.perf_counter() - c0
        wall = result.wall_ns
        if result.copy_ns and result.copied:
            self.copy_per_call.append(result.copy_ns / result.copied)
            if not self.reference:
                excess = max(0, result.copy_ns - self.copy_allowed(result.copied))
                self.copy_charged += excess
                wall += excess
        per_call = max(wall - self.child.delta_ns, 0) / k
        if self.reference:
            self.calls += k + settle
            self.batches += 1
            return per_call / 1e6
        if counted and settle and result.settle_ns - self.child.delta_ns > SETTLE_FACTOR * per_call * settle + SETTLE_SLACK_NS:
            raise HarnessError(BACKGROUND_WORK, f"the untimed first call of a batch took "
                               f"{result.settle_ns / 1e6:.2f} ms, the timed ones {per_call / 1e6:.3f} ms each: the "
                               "kernel did the batch's work ahead of the timed calls", where="kernel")
        self.calls += k + settle
        self.batches += 1
        if result.cpu_ns is None or result.cpu_begin is None or result.cpu_end is None:
            self.cpu_measured = False
        else:
            self.cpu_inside += result.cpu_ns
            self.cpu_handling += result.cpu_handling
            if self.last_cpu_end is not None:
                self.cpu_idle += result.cpu_begin - self.last_cpu_end
                self.wall_idle += started - self.last_wall_end
            self.last_cpu_end = result.cpu_end
            self.last_wall_end = time.perf_counter_ns()
        return per_call / 1e6


def _pick_batch(est_ms: float, in_bytes: int, out_bytes: int, most: int = 0, gpu: bool = False) -> int:
    """Calls per batch: enough for BATCH_MS of work, within BATCH_BYTES of inputs and outputs and
    KEEP_BYTES of outputs kept alive (on a GPU: the _GPU limits)."""
    batch_ms, batch_bytes, keep_bytes = ((BATCH_MS_GPU, BATCH_BYTES_GPU, KEEP_BYTES_GPU) if gpu
                                         else (BATCH_MS, BATCH_BYTES, KEEP_BYTES))
    k = int(batch_ms / max(est_ms, 1e-3)) + 1
    per_call = max(in_bytes + 2 * out_bytes, 1)
    k = min(k, most or MAX_BATCH, max(1, batch_bytes // per_call), max(1, keep_bytes // max(out_bytes, 1)))
    return max(k, 1)


def run_profile(req: Dict[str, Any], registry: Registry, env: WorkerEnv, judge: Judge) -> Dict[str, Any]:
    ref = registry.load_reference(req.get("reference"))
    warmup = int_field(req, "warmup", 5, 0, MAX_RUNS)
    runs = int_field(req, "runs", 50, 1, MAX_RUNS)
    seed = int_field(req, "seed", 0, 0, 2**62)
    atol, rtol = optional_float(req, "atol"), optional_float(req, "rtol")
    compiled_wanted = req.get("compiled", False)
    if not isinstance(compiled_wanted, bool):
        raise HarnessError(RUNTIME_ERROR, "\"compiled\" must be true or false")
    # where the profile's wall time goes (seconds per phase, in the answer): the timed calls are
    # a small part of it on a GPU, where drawing, copying and checking large inputs dominate
    phases: Dict[str, float] = {}
    mark = [time.perf_counter()]

    def phase(name: str) -> None:
        now = time.perf_counter()
        phases[name] = phases.get(name, 0.0) + now - mark[0]
        mark[0] = now

    pair = build_contest(ref, req.get("kernel"), seed, env, judge)
    phase("contest")
    ref_sets: List[List[Any]] = []
    bases: List[List[Any]] = []
    for r in range(ROTATING_SETS):
        args = draw_cases(ref, seed + SEED_STRIDE * r, include_dyn=False)[0].args
        ref_sets.append(clone_args(args, env.device))
        bases.append(clone_args(args, torch.device("cpu")))
    phase("draw")

    def ref_call(i: int) -> Callable[[], Any]:
        return lambda: call_user("Model.forward", "reference", ref.path, pair.ref_model, *ref_sets[i % ROTATING_SETS])

    compiled: Optional[Any] = None
    compiled_sets: List[List[Any]] = []
    compile_s, compiled_error = 0.0, None
    if compiled_wanted:
        compiled_sets = [clone_args(args, env.device) for args in ref_sets]
        compiled, compile_s, compiled_error = compile_reference(pair.ref_model, ref.path, compiled_sets[0])
        phase("compile")

    def compiled_call(i: int) -> Callable[[], Any]:
        return lambda: call_user("torch.compile(Model).forward", "reference", ref.path, compiled,
                                 *compiled_sets[i % ROTATING_SETS])

    judge.settle()  # a spare child still starting would share the cores with the timed calls
    phase("settle")
    kt = KernelTimer(pair, bases, env, atol, rtol)
    phase("kernel_inputs")
    # the reference is timed in a child of its own by the very same protocol; where it cannot run
    # there (a file it reads that is not staged, ...) the judge times it itself and says why
    rt: Optional[KernelTimer] = None
    ref_timing = "child"
    est_ref = 0.0
    try:
        rt = KernelTimer(pair, bases, env, atol, rtol, reference=reference_child(pair, seed, judge), expect=kt.expect)
        phase("reference_child")
        # a side's first call pays for lazy set-up (a GPU's libraries, a JIT, a thread pool):
        # it would pass for the call's time and shrink the batches to one call
        rt.batch(1)
        est_ref = rt.batch(1)
        kt.copy_reference = rt
    except HarnessError as err:
        judge.drop_reference()
        rt = None
        ref_timing = f"judge (the reference did not run in a child: {err.error_class}: {err.detail[:300]})"
    # verification-style calls first, as many as chance says: a kernel cannot count its way to
    # the timed calls
    pre = kt.rng.randint(2, 5)
    est = min(kt.batch(1, check=[0]) for _ in range(pre))  # the min: the first call's set-up is dropped
    # one batch of PROBE_BATCH calls measures the call better than single calls can (the call
    # overhead's jitter is of the order of a small kernel)
    probe = _pick_batch(est, kt.in_bytes, kt.out_bytes, PROBE_BATCH, env.is_cuda)
    # on a GPU the first batch of that size also grows the caching allocator by its outputs and
    # input copies (cudaMalloc): a second probe times the calls alone
    probes = 2 if env.is_cuda and probe > 1 else 1
    est = max(min(kt.batch(probe) for _ in range(probes)), est / 4 if probe == 1 else 0.0)
    k = _pick_batch(est, kt.in_bytes, kt.out_bytes, gpu=env.is_cuda)
    phase("kernel_probe")
    if rt is not None:
        # both sides in batches of the same size; a slow reference shortens them
        probe_ref = _pick_batch(est_ref, kt.in_bytes, kt.out_bytes, PROBE_BATCH, env.is_cuda)
        probes = 2 if env.is_cuda and probe_ref > 1 else 1
        est_ref = max(min(rt.batch(probe_ref) for _ in range(probes)), est_ref / 4 if probe_ref == 1 else 0.0)
        k = max(1, min(k, int(REF_BATCH_MS / max(est_ref, 1e-3))))
    else:
        # at least as many timed calls per batch as the judge's reference block has
        # (ROTATING_SETS - 1 after its untimed first call): both sides in steady state alike
        k = max(k, min(ROTATING_SETS - 1, max(1, BATCH_BYTES // max(kt.in_bytes + 2 * kt.out_bytes, 1))))
    phase("reference_probe")
    timer = Timer(env)
    # Under Triton's interpreter (a cuda worker on the CPU) the times say nothing of a GPU and the
    # engine claims no speed from them: one timed batch, no warm-up or settling calls (each call
    # is the interpreter's seconds), the sampled check of a timed output kept.
    interpreted = bool(getattr(env, "interpreted", False))
    if interpreted:
        warmup = 0
    for i in range(warmup if rt is None else 0):
        timer.time_ms(ref_call(i))
    if compiled is not None:
        for i in range(warmup):
            timer.time_ms(compiled_call(i))
    for _ in range(0 if interpreted else max(1, (warmup + k - 1) // k)):
        if rt is not None:
            rt.batch(k)
        kt.batch(k)
    ref_times: List[float] = []
    compiled_times: List[float] = []
    kernel_times: List[float] = []
    batches = 1 if interpreted else max(MIN_BATCHES, (runs + k - 1) // k)
    sampled = set(kt.rng.sample(range(batches), min(batches, max(MIN_SAMPLED, batches // 10))))

    def block(call: Callable[[int], Callable[[], Any]], times: List[float]) -> None:
        # the timed outputs of a block stay alive until it ends, as the kernel's stay alive in its
        # child until its batch ends; the settling call's output is let go at once, as there
        kept: List[Any] = []
        timer.time_ms(call(0))  # settles the other side's aftermath; not counted
        for i in range(1, ROTATING_SETS):
            if len(times) < runs:
                times.append(timer.time_ms(call(i), kept))

    def switch_settle(est_ms: float) -> int:
        return max(1, min(MAX_BATCH, math.ceil(SWITCH_SETTLE_MS / max(est_ms, 1e-3))))

    n = 0
    ref_wanted = batches if rt is not None else runs
    while (len(kernel_times) < batches or len(ref_times) < ref_wanted
           or (compiled is not None and len(compiled_times) < runs)):
        if len(ref_times) < ref_wanted:
            if rt is not None:
                if not interpreted:
                    rt.batch(k, settle=switch_settle(est_ref))  # absorbs the kernel's segment; dropped
                for _ in range(min(SEGMENT_BATCHES, ref_wanted - len(ref_times))):
                    ref_times.append(rt.batch(k))
            else:
                block(ref_call, ref_times)
        if compiled is not None and len(compiled_times) < runs:
            block(compiled_call, compiled_times)
        if len(kernel_times) < batches:
            if not interpreted:
                kt.batch(k, settle=switch_settle(est), counted=False)  # absorbs the reference's segment
            for _ in range(min(SEGMENT_BATCHES, batches - len(kernel_times))):
                check = [kt.rng.randrange(k)] if n in sampled else None
                kernel_times.append(kt.batch(k, check))
                n += 1

    phase("timed")
    answer: Dict[str, Any] = {"ok": True}
    answer.update(_summary("ref", ref_times))
    answer.update(_summary("kernel", kernel_times))
    answer["speedup"] = answer["ref_ms"] / answer["kernel_ms"] if answer["kernel_ms"] > 0 else None
    if compiled_wanted:
        answer["compile_s"] = compile_s
        answer["compiled_isa"] = compiled_vec_isa() if compiled is not None else None
        if compiled is not None:
            answer.update(_summary("compiled", compiled_times))
            answer["speedup_compiled"] = (answer["compiled_ms"] / answer["kernel_ms"]
                                          if answer["kernel_ms"] > 0 else None)
        else:
            answer["compiled_error"] = compiled_error
    answer["runs"] = runs
    answer["warmup"] = warmup
    answer["rotating_sets"] = ROTATING_SETS
    answer["kernel_batch"] = k
    answer["segment_batches"] = SEGMENT_BATCHES
    answer["kernel_switch_settle"] = switch_settle(est)
    answer["ref_timing"] = ref_timing
    if rt is not None:
        answer["ref_batch"] = k
        answer["ref_switch_settle"] = switch_settle(est_ref)
        answer["ref_call_overhead_ms"] = rt.child.delta_ns / 1e6
    if kt.copy_per_call:
        answer["kernel_copy_charged_ms"] = kt.copy_charged / 1e6
        answer["kernel_copy_ms_per_call"] = percentile(sorted(kt.copy_per_call), 0.5) / 1e6
        if rt is not None and rt.copy_per_call:
            answer["ref_copy_ms_per_call"] = percentile(sorted(rt.copy_per_call), 0.5) / 1e6
    answer["kernel_calls"] = kt.calls
    answer["kernel_checked"] = kt.checked
    answer["call_overhead_ms"] = pair.child.delta_ns / 1e6
    if kt.cpu_measured:
        answer["kernel_cpu_idle_ms"] = kt.cpu_idle / 1e6
        answer["kernel_cpu_handling_ms"] = kt.cpu_handling / 1e6
        idle_allowed = (BACKGROUND_IDLE_NS + kt.batches * BACKGROUND_IDLE_PER_BATCH_NS
                        + int(BACKGROUND_IDLE_SHARE * kt.cpu_inside))
        handling_allowed = BACKGROUND_BASE_NS + kt.batches * BACKGROUND_PER_BATCH_NS + kt.calls * BACKGROUND_PER_CALL_NS
        if env.is_cuda:  # the inputs' copy to the device before "ready", the outputs' to the host
            handling_allowed += kt.calls * (kt.in_bytes + kt.out_bytes) * BACKGROUND_GPU_COPY_NS_PER_BYTE
        share = kt.cpu_idle / max(kt.wall_idle, 1)
        answer["kernel_cpu_idle_share"] = share
        busy_idle = kt.cpu_idle > BACKGROUND_IDLE_NS and share > BACKGROUND_IDLE_MAX_SHARE
        if kt.cpu_idle > idle_allowed or busy_idle or kt.cpu_handling > handling_allowed:
            raise HarnessError(BACKGROUND_WORK, f"the kernel's process used CPU time outside its timed calls: "
                               f"{kt.cpu_idle / 1e6:.1f} ms ({100 * share:.0f}% of the time) while it had nothing "
                               "to do (allowed "
                               f"{idle_allowed / 1e6:.1f} ms) and {kt.cpu_handling / 1e6:.1f} ms taking its inputs "
                               f"and describing its outputs (allowed {handling_allowed / 1e6:.1f} ms); inside the "
                               f"calls {kt.cpu_inside / 1e6:.1f} ms: all work must happen between a call and its "
                               "return", where="kernel")
    flags = _flags(answer, kt, pair, ref, seed, env, atol, rtol)
    if flags:
        answer["flags"] = flags
    phase("flags")
    phases["checks_within"] = kt.check_s
    answer["phases_s"] = {name: round(v, 3) for name, v in phases.items()}
    if ref.get_inputs_dyn_list is not None:
        answer["case"] = "get_inputs"
    answer["env"] = env.summary()
    return answer


def _flags(answer: Dict[str, Any], kt: KernelTimer, pair: Contest, ref: Any, seed: int, env: WorkerEnv,
           atol: Optional[float], rtol: Optional[float]) -> List[str]:
    """Speedups too good to take on trust: over SUSPICIOUS_SPEEDUP, or faster than the memory
    system can move the inputs and outputs. Each is verified again on new draws (every case, so
    other shapes where get_inputs_dyn_list gives them) before it is reported, flagged."""
    flags: List[str] = []
    speedup = answer.get("speedup") or 0.0
    if speedup > SUSPICIOUS_SPEEDUP:
        flags.append("speedup_over_10x")
    traffic = kt.in_bytes + kt.out_bytes
    bandwidth = memory_bandwidth() if env.device.type == "cpu" and traffic >= ROOFLINE_MIN_BYTES else None
    if bandwidth and answer["kernel_ms"] > 0 and traffic / (answer["kernel_ms"] / 1e3) > ROOFLINE_MARGIN * bandwidth:
        flags.append("beyond_roofline")
    if flags:
        for t in range(REVERIFY_TRIALS):
            for case in draw_cases(ref, seed + 7919 * (t + 1) + kt.rng.randrange(1 << 20)):
                ref_out = run_reference(ref, pair.ref_model, clone_args(case.args, env.device), env)
                out = run_kernel_checked(pair, case.args, output_sizes(ref_out), env)
                result = compare_outputs(ref_out, out, atol, rtol, f"re-verification of a {speedup:.1f}x speedup",
                                         reduction_sizes(case.args, ref_out))
                if not result.ok:
                    raise HarnessError(result.error_class or NUMERICAL_MISMATCH,
                                       result.detail or "outputs differ", where="kernel")
    return flags


_BANDWIDTH: List[float] = []


def memory_bandwidth() -> float:
    """Bytes per second a large copy moves on this machine (read + write), measured once."""
    if not _BANDWIDTH:
        src = torch.empty(64 << 18, dtype=torch.float32).fill_(1.0)
        dst = torch.empty_like(src)
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            dst.copy_(src)
            best = min(best, time.perf_counter() - t)
        _BANDWIDTH.append(2 * src.numel() * 4 / best)
    return _BANDWIDTH[0]
