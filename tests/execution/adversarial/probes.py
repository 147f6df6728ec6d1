"""The adversarial probes as plain Python (no pytest): the tests and
benchmarks/integrity_bench.py build, run and judge them the same way.

`build(tmp)` fills the fixtures' placeholders ({{TARGET}}, {{PORT}}, {{DB}}) with a path, a
listening port and an SQLite file under `tmp`; `contained(side)` says which side effects did
not happen.
"""
from __future__ import annotations

import os
import re
import socket
import sqlite3
import threading
from pathlib import Path

from workbench.problems import get_problem
from workbench.records import Candidate

HERE = Path(__file__).parent
FIXTURES = sorted((HERE / "fixtures").glob("a*.py"))
SECRET = "sk-adversarial-0123456789"


def expect(name: str) -> set[str]:
    """The statuses a probe may end with (its EXPECT: line)."""
    src = (HERE / "fixtures" / f"{name}.py").read_text()
    return {s.strip() for s in re.search(r"^EXPECT:\s*(.+)$", src, re.M).group(1).split(",")}


def markers() -> set[str]:
    """Command lines of live processes that carry a probe's sleep marker."""
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and re.search(r"sleep 301\.(25|5)", cmd):
            found.add(cmd)
    return found


class Listener:
    """A TCP server on the loopback address that records whatever reaches it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = False
        self._t = threading.Thread(target=self._serve, daemon=True)
        self._t.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(1024) or b"(connected)")
                except OSError:
                    self.received.append(b"(connected)")

    def close(self) -> None:
        self._stop = True
        self._t.join(2)
        self.sock.close()


class Probes:
    """The probe candidates with their placeholders filled, and the side effects to check."""

    def __init__(self, tmp: Path):
        self.target = tmp / "outside" / "written.txt"
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.db = tmp / "store.sqlite"
        with sqlite3.connect(self.db) as con:
            con.execute("CREATE TABLE IF NOT EXISTS probe (x INTEGER)")
            con.execute("DELETE FROM probe")
            con.executemany("INSERT INTO probe VALUES (?)", [(i,) for i in range(5)])
        self.listener = Listener()
        self.problem = get_problem("L1/01_softmax")
        self.candidates: dict[str, Candidate] = {}
        for path in FIXTURES:
            src = (path.read_text().replace("{{TARGET}}", str(self.target))
                   .replace("{{PORT}}", str(self.listener.port)).replace("{{DB}}", str(self.db)))
            self.candidates[path.stem] = Candidate.from_source(self.problem.id, src, origin="test:adversarial")
        big = ("import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
               "        return x\n" + "# padding\n" * 120_000)
        self.candidates["oversized_source"] = Candidate.from_source(self.problem.id, big, origin="test:adversarial")

    def side_effects(self) -> dict:
        """What the probes managed to do outside their worker (all empty or unchanged when contained)."""
        self.listener.close()
        with sqlite3.connect(self.db) as con:
            rows = con.execute("SELECT COUNT(*) FROM probe").fetchone()[0]
        return {"file_written": self.target.exists(), "db_rows": rows, "connections": list(self.listener.received),
                "processes_left": sorted(markers())}


def contained(side: dict) -> bool:
    return (not side["file_written"] and side["db_rows"] == 5 and not side["connections"]
            and not side["processes_left"])
