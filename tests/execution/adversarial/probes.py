"""The adversarial probes as plain Python (no pytest): the tests and
benchmarks/integrity_bench.py build, run and judge them the same way (driver.py runs them).

`Probes(tmp)` fills the fixtures' placeholders ({{TARGET}}, {{PORT}}, {{DB}}) with a path, a
listening port and an SQLite file under `tmp`; `contained(side)` says which side effects did
not happen. Every b-fixture has an honest twin: the same file with `ATTACK = True` turned
into `ATTACK = False` (the same run-time names, the same code path, no attack), so a probe is
judged against a candidate the static reader cannot tell from it.

A probe is caught when its status is not ok and is one its EXPECT: line names; it is contained
when EXPECT names "contained", its status is ok, its twin is ok, and its speedup is at most
`tol` times its twin's (the attack changed nothing the verdict uses); where the rows hold
repeated measurements (driver.py --repeats), the medians of the repeats are compared. No probe
may leak a secret of the process that runs the executor (SECRET, key-shaped, which the scrubber also
removes; MARKER, which only containment keeps out) into a stored reason or log.
"""
from __future__ import annotations

import os
import re
import socket
import sqlite3
import statistics
import threading
from pathlib import Path

from workbench.problems import get_problem
from workbench.records import Candidate

HERE = Path(__file__).parent
FIXTURES = sorted((HERE / "fixtures").glob("a*.py")) + sorted((HERE / "fixtures").glob("b*.py"))
SECRET_ENV, SECRET = "WB_ADVERSARIAL_SECRET", "sk-adversarial-0123456789"
MARKER_ENV, MARKER = "WB_PROBE_MARKER", "probe-marker-7f3a9c51e2"
ATTACK_ON, ATTACK_OFF = "ATTACK = True", "ATTACK = False"


def expect(name: str) -> set[str]:
    """The outcomes a probe may end with (its EXPECT: line): statuses and "contained"."""
    src = (HERE / "fixtures" / f"{name}.py").read_text()
    return {s.strip() for s in re.search(r"^EXPECT:\s*(.+)$", src, re.M).group(1).split(",")}


def twin_source(source: str) -> str | None:
    """The honest twin of a probe's source, or None for a probe without one."""
    return source.replace(ATTACK_ON, ATTACK_OFF) if source.count(ATTACK_ON) == 1 else None


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
    """The probe candidates with their placeholders filled, their twins, and the side effects
    to check."""

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
        self.twins: dict[str, Candidate] = {}
        for path in FIXTURES:
            src = (path.read_text().replace("{{TARGET}}", str(self.target))
                   .replace("{{PORT}}", str(self.listener.port)).replace("{{DB}}", str(self.db)))
            self.candidates[path.stem] = Candidate.from_source(self.problem.id, src, origin="test:adversarial")
            twin = twin_source(src)
            if twin is not None:
                self.twins[path.stem] = Candidate.from_source(self.problem.id, twin, origin="test:adversarial-twin")
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


def leaked(row: dict) -> list[str]:
    """The secrets found in a stored reason or log."""
    text = str(row.get("reason", "")) + str(row.get("log", ""))
    return [s for s in (SECRET, MARKER) if s in text]


def outcome(name: str, row: dict, twin: dict | None, tol: float) -> str:
    """"caught", "contained" or "failed" for one probe's row (status, speedup), given its
    twin's row (None: no twin) and the speedup tolerance `tol`."""
    allowed = expect(name) if name != "oversized_source" else {"compile_error"}
    if row["status"] != "ok":
        return "caught" if row["status"] in allowed else "failed"
    if "contained" not in allowed or twin is None or twin["status"] != "ok":
        return "failed"
    s, t = typical_speedup(row), typical_speedup(twin)
    return "contained" if s is not None and t is not None and s <= tol * t else "failed"


def typical_speedup(row: dict) -> float | None:
    """A row's speedup: the median of its repeated measurements (`speedups`, driver.py's
    --repeats) where it has them, else its one `speedup`."""
    xs = [x for x in row.get("speedups") or [] if x is not None]
    return statistics.median(xs) if xs else row.get("speedup")
