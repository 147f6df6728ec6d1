"""Executors, the sandbox's budgets and the batch runner (CPU)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from exec_fixtures import CPU_OPTIONS, load_fixtures
from workbench.errors import ConfigError
from workbench.execution import compile_cache
from workbench.execution.executors import CacheExecutor, CPUExecutor
from workbench.execution.hardware import cpu_hardware
from workbench.execution.job import MeasureJob, MeasureOptions
from workbench.execution.sandbox import run_in_sandbox
from workbench.records import Candidate, Hardware, Measurement, Status

HONEST = {f.name: f for f in load_fixtures("honest")}
SOFTMAX = HONEST["softmax_manual_torch"]
ROOT = Path(__file__).resolve().parents[2]


def test_cpu_executor_ok_record_is_complete():
    with CPUExecutor(workers=1, options=CPU_OPTIONS) as ex:
        m = ex.measure(SOFTMAX.problem, [SOFTMAX.candidate])[0]
    assert m.status is Status.OK, m.reason
    assert m.hardware_key == "cpu" and m.hardware.key == "cpu"
    assert m.reference_ms > 0 and m.candidate_ms > 0 and m.candidate_runs >= 3
    assert m.reference_ci_low_ms <= m.reference_ms <= m.reference_ci_high_ms
    assert m.speedup == pytest.approx(m.reference_ms / m.candidate_ms)
    assert m.bin is not None


def test_cpu_executor_refuses_cuda_candidates_as_a_status():
    c = Candidate.from_source(SOFTMAX.problem.id, "from torch.utils.cpp_extension import load_inline\n"
                              "class ModelNew: pass\n")
    assert c.backend == "cuda"
    with CPUExecutor(workers=1) as ex:
        m = ex.measure(SOFTMAX.problem, [c])[0]
        assert m.status is Status.RUNTIME_ERROR and "GPU" in m.reason
    with pytest.raises(ConfigError):
        ex.submit(SOFTMAX.problem, [c])  # closed


def test_timing_phase_has_its_own_budget(tmp_path):
    # Fine through its warm-up and the judge's trials (6 calls), then hangs once timing starts.
    src = SOFTMAX.candidate.source.replace(
        "    def forward(self, x):\n",
        "    calls = 0\n\n    def forward(self, x):\n"
        "        ModelNew.calls += 1\n"
        "        while ModelNew.calls > 7:\n            pass\n")
    c = Candidate.from_source(SOFTMAX.problem.id, src)
    job = MeasureJob(SOFTMAX.problem, cpu_hardware(), device="cpu", timeout_s=120, run_timeout_s=3,
                     cache_root=tmp_path, options=MeasureOptions.from_dict({"seeds": [0, 1], **CPU_OPTIONS}))
    t0 = time.monotonic()
    m = run_in_sandbox(job, c)
    assert m.status is Status.TIMEOUT, m.reason
    assert "timing took longer than 3 s" in m.reason
    # The stuck worker is killed once the judge's session times out, not when the 60 s budget of
    # compilation and correctness runs out (it cannot report while it spins in the candidate).
    assert time.monotonic() - t0 < 90, (f"{time.monotonic() - t0:.0f} s: the worker was not stopped when the "
                                        "judge's session timed out (or this machine is very slow)")


def test_roofline_floor_flags_a_too_fast_candidate(tmp_path):
    job = MeasureJob(SOFTMAX.problem, cpu_hardware(), device="cpu", timeout_s=60, roofline_floor_ms=1e6,
                     cache_root=tmp_path, options=MeasureOptions.from_dict(CPU_OPTIONS))
    m = run_in_sandbox(job, SOFTMAX.candidate)
    assert m.status is Status.CHEAT_SUSPECTED and "roofline" in m.reason


def test_cache_executor_replays_and_reports_unknown_candidates():
    ok = Measurement(candidate_id=SOFTMAX.candidate.id, problem_id=SOFTMAX.problem.id, hardware_key="h100",
                     status=Status.OK, reference_ms=2.0, candidate_ms=1.0, speedup=2.0)
    other = Measurement(candidate_id="elsewhere", problem_id="x", hardware_key="a100", status=Status.OK)
    ex = CacheExecutor([ok, other], "h100")
    assert SOFTMAX.candidate.id in ex and "elsewhere" not in ex
    unknown = Candidate.from_source(SOFTMAX.problem.id, "class ModelNew: pass\n")
    got = ex.measure(SOFTMAX.problem, [SOFTMAX.candidate, unknown])
    assert got[0] == ok
    assert got[1].status is not Status.OK and "not in the replay cache" in got[1].reason
    with pytest.raises(ConfigError):
        CacheExecutor([other], "h100")


def test_build_cache_key_is_content_addressed(tmp_path):
    hw = Hardware(key="h100", name="H100", compute_capability="9.0", torch_version="2.11", cuda_version="12.8")
    a = Candidate.from_source("p", "load_inline # a\nclass ModelNew: pass\n")
    b = Candidate.from_source("p", "load_inline # a\nclass ModelNew: pass\n\n")
    c = Candidate.from_source("p", "load_inline # a\nclass ModelNew: x = 1\n")
    ka, kb, kc = (compile_cache.build_key(x, hw) for x in (a, b, c))
    assert ka == kb and ka != kc
    assert ka != compile_cache.build_key(a, hw.replace(compute_capability="8.0"))
    env = compile_cache.cache_env(a, hw, tmp_path)
    assert env["TORCH_EXTENSIONS_DIR"].endswith(ka) and env["TRITON_CACHE_DIR"].startswith(str(tmp_path))


def _run_batch(manifest, out, *extra):
    return subprocess.run([sys.executable, "-m", "workbench.execution.batch", "--manifest", str(manifest),
                           "--out", str(out), "--cpu", "--workers", "2", *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_batch_is_resumable_and_survives_bad_candidates(tmp_path):
    faults = {f.name: f for f in load_fixtures("faults")}
    jobs = [SOFTMAX, HONEST["relu_where"], faults["segfault"], faults["syntax_error"]]
    manifest = tmp_path / "in.jsonl"
    lines = [json.dumps({"problem": f.problem.to_dict(), "candidate": f.candidate.to_dict()}) for f in jobs]
    manifest.write_text("\n".join(lines[:3] + ["{not json"] + lines[3:]) + "\n")
    out = tmp_path / "out.jsonl"
    first = _run_batch(manifest, out)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "skipped, not a manifest line" in first.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["candidate_id"] for r in rows) == sorted(f.candidate.id for f in jobs)
    by_id = {r["candidate_id"]: r["status"] for r in rows}
    assert by_id[faults["segfault"].candidate.id] == "crashed"
    assert by_id[faults["syntax_error"].candidate.id] == "compile_error"
    assert by_id[SOFTMAX.candidate.id] == "ok"
    assert json.loads(first.stdout.strip().splitlines()[-1])["counts"]["ok"] == 2
    # A rerun measures nothing new; a cut last line is measured again.
    out.write_text("\n".join(out.read_text().splitlines()[:-1]) + '\n{"candidate_id": "trunc')
    second = _run_batch(manifest, out)
    assert second.returncode == 0
    assert "1 to measure" in second.stderr
    ids = [json.loads(line)["candidate_id"] for line in out.read_text().splitlines()
           if line.startswith("{") and line.endswith("}")]
    assert sorted(ids) == sorted(f.candidate.id for f in jobs)


def test_gate_exclusive_waits_for_shared_and_blocks_new_entries():
    import threading
    import time

    from workbench.execution.executors import _Gate

    gate, events = _Gate(), []
    release = threading.Event()

    def shared(name, hold):
        with gate.shared():
            events.append(f"{name}+")
            if hold:
                release.wait(5)
            events.append(f"{name}-")

    def exclusive():
        with gate.exclusive():
            events.append("X+")
            time.sleep(0.05)
            events.append("X-")

    a = threading.Thread(target=shared, args=("a", True))
    a.start()
    time.sleep(0.05)
    x = threading.Thread(target=exclusive)
    x.start()
    time.sleep(0.05)
    b = threading.Thread(target=shared, args=("b", False))
    b.start()
    time.sleep(0.05)
    assert events == ["a+"]  # X waits for a; b waits behind X
    release.set()
    for t in (a, x, b):
        t.join(5)
    assert events == ["a+", "a-", "X+", "X-", "b+", "b-"]


def test_oom_retry_only_for_requests_that_fit():
    from workbench.execution.executors import _retry_after_oom

    def m(reason, status=Status.RUNTIME_ERROR):
        return Measurement(candidate_id="c", problem_id="p", hardware_key="h100", status=status, reason=reason)

    crowded = "candidate: out of GPU memory: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has..."
    huge = "candidate: out of GPU memory: CUDA out of memory. Tried to allocate 1024.00 GiB. GPU 0 has..."
    assert _retry_after_oom(m(crowded), 81079)
    assert not _retry_after_oom(m(huge), 81079)
    assert not _retry_after_oom(m(crowded, Status.INCORRECT), 81079)
    assert not _retry_after_oom(m("ValueError: bad"), 81079)
