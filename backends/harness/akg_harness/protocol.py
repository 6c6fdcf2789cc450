"""Line protocol: one JSON object per line in each direction, and the error type answers carry."""

from __future__ import annotations

import json
import math
from typing import IO, Any, Dict, Optional

# Error classes the engine understands (DESIGN.md, "Harness protocol").
BUILD_ERROR = "build_error"
RUNTIME_ERROR = "runtime_error"
SHAPE_MISMATCH = "shape_mismatch"
NUMERICAL_MISMATCH = "numerical_mismatch"
FORBIDDEN = "forbidden"
DESIGN_ERROR = "design_error"  # a sketch that does not compute the reference (design_check)

# A request line longer than this is refused rather than parsed.
MAX_LINE_BYTES = 1 << 20
# A detail string is cut to this many characters so answers stay small.
MAX_DETAIL_CHARS = 4000


class HarnessError(Exception):
    """A failure that becomes an ``ok:false`` answer.

    ``where`` is "reference" or "kernel" (or None when neither is to blame); ``line`` and
    ``file`` point into the user's file when the failure arose there.
    """

    def __init__(self, error_class: str, detail: str, where: Optional[str] = None,
                 line: Optional[int] = None, file: Optional[str] = None) -> None:
        super().__init__(detail)
        self.error_class = error_class
        self.detail = detail
        self.where = where
        self.line = line
        self.file = file

    def fields(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"class": self.error_class, "detail": cut_detail(self.detail)}
        if self.where is not None:
            out["where"] = self.where
        if self.line is not None:
            out["line"] = self.line
        if self.file is not None:
            out["file"] = self.file
        return out


def cut_detail(text: str) -> str:
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    return text[: MAX_DETAIL_CHARS - 20] + " ... (cut)"


def parse_request(line: bytes) -> Dict[str, Any]:
    """Parse one request line; raises HarnessError (with the id when one could be read)."""
    if len(line) > MAX_LINE_BYTES:
        raise HarnessError(RUNTIME_ERROR, f"request line longer than {MAX_LINE_BYTES} bytes")
    try:
        req = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HarnessError(RUNTIME_ERROR, f"malformed request line: {exc}") from None
    if not isinstance(req, dict):
        raise HarnessError(RUNTIME_ERROR, "malformed request: expected a JSON object")
    return req


def request_id(req: Dict[str, Any]) -> Optional[int]:
    rid = req.get("id")
    if isinstance(rid, int) and not isinstance(rid, bool):
        return rid
    return None


def json_safe(value: Any) -> Any:
    """Replace non-finite floats by the strings "nan", "inf", "-inf" (JSON has no such numbers)."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


class AnswerWriter:
    """Writes answers, one compact JSON object per line, flushed at once."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def send(self, answer: Dict[str, Any]) -> None:
        text = json.dumps(json_safe(answer), separators=(",", ":"), allow_nan=False)
        self._stream.write(text + "\n")
        self._stream.flush()


def error_answer(rid: Optional[int], err: HarnessError, extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    answer: Dict[str, Any] = {"id": rid, "ok": False}
    if extra:
        answer.update(extra)
    answer.update(err.fields())
    return answer
