"""A harness worker for tests of the engine's side of the protocol: it runs the real worker
(AKG_REAL_WORKER) as its child and passes the lines both ways, except where its plan
(AKG_FAKE_PLAN, a JSON object) says otherwise:

- "ready_sandbox": the ready line's "sandbox" becomes this object; null removes it (a worker
  older than the sandbox); "echo" makes it {"mode": <AKG_SANDBOX's mode>, "detail": "settings
  <AKG_SANDBOX as received>", "limits": <AKG_SANDBOX parsed>}, so a test sees what the engine
  passed.
- "verify", "profile": one entry per request of that op, in order: null passes the request to
  the real worker; {"answer": {...}} answers it with that object (the request's id added)
  without running it; {"merge": {...}} runs it and adds these fields to the real answer.
  Requests past the list's end go to the real worker.

Installed as backends/harness/worker.py under a test's own AKG_HOME."""
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading


def die_with_parent():
    try:
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main():
    die_with_parent()
    plan = json.loads(os.environ.get("AKG_FAKE_PLAN") or "{}")
    child = subprocess.Popen([sys.executable, "-u", os.environ["AKG_REAL_WORKER"], *sys.argv[1:]],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    out_lock = threading.Lock()
    merges = {}  # request id -> fields to add to its answer
    counts = {"verify": 0, "profile": 0}

    def send(obj):
        with out_lock:
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()

    def requests():
        for line in sys.stdin:
            try:
                req = json.loads(line)
            except ValueError:
                req = None
            op = req.get("op") if isinstance(req, dict) else None
            entry = None
            if op in counts:
                entries = plan.get(op) or []
                if counts[op] < len(entries):
                    entry = entries[counts[op]]
                counts[op] += 1
            if isinstance(entry, dict) and "answer" in entry:
                send(dict(entry["answer"], id=req.get("id")))
                continue
            if isinstance(entry, dict) and "merge" in entry:
                merges[req.get("id")] = entry["merge"]
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=requests, daemon=True).start()
    for line in child.stdout:
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg.get("event") == "ready" and "ready_sandbox" in plan:
            want = plan["ready_sandbox"]
            msg.pop("sandbox", None)
            if want == "echo":
                raw = os.environ.get("AKG_SANDBOX")
                settings = json.loads(raw) if raw else {}
                msg["sandbox"] = {"mode": settings.get("mode"), "detail": "settings %s" % raw,
                                  "limits": settings}
            elif want is not None:
                msg["sandbox"] = want
            send(msg)
        elif isinstance(msg, dict) and msg.get("id") in merges and "event" not in msg:
            msg.update(merges.pop(msg["id"]))
            send(msg)
        else:
            with out_lock:
                sys.stdout.write(line)
                sys.stdout.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
