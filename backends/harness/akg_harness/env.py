"""The worker's environment: device, thread counts and the BLAS torch really uses."""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import torch

_BLAS_LIB_RE = re.compile(r"(lib(?:open)?blas[^/\s]*\.so[^/\s]*|libmkl_[^/\s]*\.so[^/\s]*|libblis[^/\s]*\.so[^/\s]*)$")


@dataclass
class WorkerEnv:
    device: torch.device
    threads: int
    blas: Dict[str, Any] = field(default_factory=dict)
    # the worker was asked for a CUDA device and runs Triton's interpreter on the CPU instead
    # (AKG_TRITON_INTERPRET=1): results are checked as on the GPU; times are the interpreter's
    interpreted: Optional[str] = None

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def summary(self) -> Dict[str, Any]:
        """The environment a profile answer records (DESIGN.md, "Timing")."""
        return {
            "torch": torch.__version__,
            "threads": self.threads,
            "blas": self.blas.get("info"),
            "blas_library": self.blas.get("library"),
            "coretype": self.blas.get("coretype"),
            "device": str(self.device),
            **({"triton_interpret": self.interpreted} if self.interpreted else {}),
        }


def parse_device(text: Optional[str]) -> torch.device:
    """Accepts "cpu" or "cuda:N"; raises ValueError otherwise."""
    if text is None or text == "cpu":
        return torch.device("cpu")
    if re.fullmatch(r"cuda:\d+", text):
        return torch.device(text)
    if re.fullmatch(r"npu:\d+", text):
        raise ValueError(f"device {text!r}: the harness verifies and times on cpu and cuda:N only; "
                         "an Ascend NPU's kernels (triton_ascend) are generated with --workflow "
                         "kernelgen_only and reported unverified")
    raise ValueError(f"unknown device {text!r}: expected cpu or cuda:N")


def thread_count() -> int:
    raw = os.environ.get("AKG_THREADS", "")
    try:
        n = int(raw)
    except ValueError:
        n = 0
    return n if n > 0 else (os.cpu_count() or 1)


def set_threads(n: int) -> int:
    torch.set_num_threads(n)
    try:
        # Only one inter-op thread: the worker runs one call at a time.
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set or parallel work already started; harmless
    return torch.get_num_threads()


def torch_blas_info() -> Optional[str]:
    try:
        config = torch.__config__.show()
    except Exception:  # noqa: BLE001 - informational only
        return None
    match = re.search(r"BLAS_INFO=([^,\s]+)", config)
    return match.group(1) if match else None


def loaded_blas_libraries() -> list:
    """Shared BLAS libraries mapped into this process (Linux only; empty elsewhere)."""
    found: list = []
    try:
        with open("/proc/self/maps", "r", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split()
                if len(parts) < 6:
                    continue
                path = parts[-1]
                if _BLAS_LIB_RE.search(os.path.basename(path)) and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def probe_blas(device: torch.device) -> Dict[str, Any]:
    info: Dict[str, Any] = {"info": torch_blas_info()}
    if device.type == "cpu":
        # A small matmul makes torch load its BLAS before we look at the mappings.
        a = torch.ones(64, 64)
        _ = a @ a
        info["coretype"] = os.environ.get("OPENBLAS_CORETYPE")
        libs = loaded_blas_libraries()
        info["library"] = libs[0] if libs else None
        if len(libs) > 1:
            info["libraries"] = libs
        info["mkldnn"] = bool(torch.backends.mkldnn.is_available())
    else:
        info["library"] = "cublas"
        info["cuda"] = torch.version.cuda
    return info


def interpreted_device(device_text: Optional[str]) -> Optional[str]:
    """With AKG_TRITON_INTERPRET=1 a worker asked for cuda:N serves on the CPU under Triton's
    interpreter (TRITON_INTERPRET=1, which its children inherit): the GPU DSL's kernels run and
    are verified without a GPU, and every answer's env says so. Returns the CUDA device it stands
    for, or None; call before anything imports triton."""
    if os.environ.get("AKG_TRITON_INTERPRET") != "1" or not (device_text or "").startswith("cuda"):
        return None
    os.environ["TRITON_INTERPRET"] = "1"
    return device_text


def setup(device_text: Optional[str], interpreted: Optional[str] = None) -> WorkerEnv:
    device = parse_device(device_text)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {device} requested but CUDA is not available")
        torch.cuda.set_device(device)
    threads = set_threads(thread_count())
    return WorkerEnv(device=device, threads=threads, blas=probe_blas(device), interpreted=interpreted)


def ready_event(env: WorkerEnv) -> Dict[str, Any]:
    event: Dict[str, Any] = {
        "event": "ready",
        "pid": os.getpid(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "device": str(env.device),
        "threads": env.threads,
        "blas": env.blas,
    }
    if env.interpreted:
        event["triton_interpret"] = env.interpreted
    if env.is_cuda:
        event["gpu"] = torch.cuda.get_device_name(env.device)
    return event
