"""akg candidate child: runs one candidate kernel for the judge (akg_harness/child.py).

Usage (started by the judge, inside the sandbox; never by hand):
    python -u child_main.py --in-fd N --device cpu|cuda:N

stdin carries the judge's commands; the answers go to a private copy of descriptor 1, and
descriptor 1 itself points at stderr, so whatever the candidate prints cannot forge an answer line.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _die_with_parent() -> None:
    """Without bubblewrap (sandbox mode none) nothing else ends the child when the judge dies."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _exit_with_judge(fd: int) -> None:
    """Ends this process as soon as the judge's end of ``fd`` (stdin) closes, from its first
    moments on: a judge killed while this child starts (importing torch takes seconds) would
    otherwise leave it running until it first reads, and the sandbox's own processes with it. A
    thread blocked in poll for hang-up only; it costs nothing while the judge lives."""
    import select
    import threading

    def watch() -> None:
        poller = select.poll()
        poller.register(fd, select.POLLHUP | select.POLLERR)
        while True:
            for _, event in poller.poll():
                if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    os._exit(0)

    threading.Thread(target=watch, name="akg-judge-watch", daemon=True).start()


def main() -> int:
    parser = argparse.ArgumentParser(description="akg candidate child")
    parser.add_argument("--in-fd", type=int, required=True)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    _die_with_parent()
    _exit_with_judge(0)
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    answers = os.fdopen(answer_fd, "w", encoding="utf-8", buffering=1)

    from akg_harness import envinfo
    envinfo.apply_malloc_policy()
    import torch

    from akg_harness import env as worker_env
    from akg_harness.child import Child

    device = worker_env.parse_device(args.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    worker_env.set_threads(worker_env.thread_count())
    child = Child(answers, args.in_fd, device)
    child.send({"event": "ready", "pid": os.getpid(), "threads": torch.get_num_threads()})
    with torch.no_grad():
        return child.serve()


if __name__ == "__main__":
    sys.exit(main())
