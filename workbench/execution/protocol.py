"""Framed messages between the executor and the processes it starts.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (one object).
A chunk worker reads its jobs on its standard input, one job at a time, and writes its
messages on file descriptor `CHANNEL_FD`; neither is named in its argv, environment or work
directory. The parent sends job k+1 only after job k's result came back, so code of job k
never sees a later job. Standard library only.
"""
from __future__ import annotations

import json
import os
import select
import struct
import time

#: The worker's write end of its result channel (set up by the parent with `pass_fds`).
CHANNEL_FD = 3
#: Largest frame accepted (bytes): results carry timings and metadata, never tensors.
MAX_FRAME = 16 * 2**20


class ProtocolError(Exception):
    """A frame that is not a well-formed message (too large, not JSON, not an object)."""


def encode(obj: dict) -> bytes:
    data = json.dumps(obj, allow_nan=True).encode()
    if len(data) > MAX_FRAME:
        raise ProtocolError(f"message of {len(data)} bytes is over the {MAX_FRAME}-byte limit")
    return struct.pack(">I", len(data)) + data


def send(fd: int, obj: dict) -> None:
    """Write one frame to `fd` (blocking until all of it is written)."""
    view = memoryview(encode(obj))
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _decode(data: bytes) -> dict:
    try:
        obj = json.loads(data.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProtocolError(f"a frame that is not JSON: {e}") from e
    if not isinstance(obj, dict):
        raise ProtocolError(f"a frame that is not a JSON object but {type(obj).__name__}")
    return obj


class FrameReader:
    """Reads frames from a pipe; `poll` never blocks longer than its timeout."""

    def __init__(self, fd: int):
        self.fd = fd
        self._buf = bytearray()
        self.eof = False

    def _frames(self) -> list[dict]:
        out = []
        while len(self._buf) >= 4:
            (n,) = struct.unpack(">I", self._buf[:4])
            if n > MAX_FRAME:
                raise ProtocolError(f"a frame of {n} bytes is over the {MAX_FRAME}-byte limit")
            if len(self._buf) < 4 + n:
                break
            data = bytes(self._buf[4:4 + n])
            del self._buf[:4 + n]
            out.append(_decode(data))
        return out

    def poll(self, timeout_s: float) -> list[dict]:
        """Complete frames that arrived within `timeout_s` seconds (maybe none)."""
        if self.eof:
            return self._frames()
        ready, _, _ = select.select([self.fd], [], [], max(timeout_s, 0.0))
        while ready:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
                break
            self._buf += chunk
            ready, _, _ = select.select([self.fd], [], [], 0)
        return self._frames()

    def read(self, timeout_s: float | None = None) -> dict | None:
        """The next frame, blocking up to `timeout_s` (None: forever); None at end of input."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        pending = self._frames()
        while not pending:
            if self.eof:
                return None
            left = 1.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return None
            pending = self.poll(min(left, 1.0))
        self._buf[:0] = b"".join(encode(p) for p in pending[1:])
        return pending[0]
