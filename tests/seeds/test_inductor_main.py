"""`python -m workbench.seeds.inductor`'s loop: a problem that leaves a sticky CUDA error ends
the process after its row (EXIT_CONTEXT_LOST), so the problems after it get a fresh process."""
from __future__ import annotations

import json

from workbench.records import Problem
from workbench.seeds import inductor

SRC = "import torch\n"


def _todo(tmp_path, ids):
    todo = tmp_path / "todo.jsonl"
    todo.write_text("".join(json.dumps(Problem(id=i, level=1, name=i, source=SRC).to_dict()) + "\n" for i in ids))
    return todo


def test_a_sticky_cuda_error_ends_the_process_after_its_row(tmp_path, monkeypatch):
    seen = []

    def fake_seed_for(p, device="cuda", lock=None):
        seen.append(p.id)
        if p.id == "L1/2":
            return {"problem_id": p.id, "ok": False,
                    "error": "AcceleratorError: CUDA error: an illegal instruction was encountered"}
        return {"problem_id": p.id, "ok": True, "source": "x"}

    monkeypatch.setattr(inductor, "seed_for", fake_seed_for)
    out = tmp_path / "out.jsonl"
    rc = inductor.main([str(_todo(tmp_path, ["L1/1", "L1/2", "L1/3"])), str(out)])
    rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert rc == inductor.EXIT_CONTEXT_LOST
    assert [r["problem_id"] for r in rows] == ["L1/1", "L1/2"] and seen == ["L1/1", "L1/2"]
    # the next process, told to skip what has rows, does the rest
    rc = inductor.main([str(_todo(tmp_path, ["L1/1", "L1/2", "L1/3"])), str(out), "--skip", "L1/1,L1/2"])
    assert rc == 0 and seen[-1] == "L1/3"


def test_context_lost_reads_the_row_and_its_baseline():
    assert inductor.context_lost({"ok": False, "error": "RuntimeError: CUDA error: an illegal memory access"})
    assert inductor.context_lost({"ok": True, "baseline": {"error": "AcceleratorError: device-side assert triggered"}})
    assert not inductor.context_lost({"ok": False, "error": "torch.compile failed: Unsupported: data-dependent"})
    assert not inductor.context_lost({"ok": True})


class _Recorder:
    """A GpuLock's step_out / step_in, recorded."""

    path = "gpu0.lock"

    def __init__(self):
        self.out, self.log = False, []

    def step_out(self):
        self.out = True
        self.log.append("out")

    def step_in(self):
        if self.out:
            self.log.append("in")
        self.out = False


def _fake_compile_fx(lock):
    def compile_fx(gm, example_inputs, **kwargs):
        lock.log.append(f"compile(out={lock.out})")

        def run(*args):
            lock.log.append(f"run(out={lock.out})")
            return gm.forward(*args)
        return run
    return compile_fx


def test_tracing_and_compiling_leave_the_gpu_lock_free_and_the_compiled_code_runs_inside(monkeypatch):
    """The capture and the torch.compile baseline step out of the GPU's shared lock while
    Dynamo traces and Inductor compiles (CPU work: a timer waiting for the GPU must not wait on
    it), and step back in before the compiled code launches anything."""
    import torch
    import torch._inductor.compile_fx as cfx

    lock = _Recorder()
    monkeypatch.setattr(cfx, "compile_fx", _fake_compile_fx(lock))
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    backend = inductor._stepping_inductor("default", lock)
    assert backend is not None and backend.compiler_name == "inductor"
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend)
    x = torch.randn(4, 8)
    with torch.no_grad():
        y = inductor._compiling_outside(compiled, lock, x)
    assert torch.allclose(y, model(x))
    assert lock.log == ["out", "compile(out=True)", "in", "run(out=False)"]
    # Without a lock there is nothing to step out of: torch.compile(mode=...) as it is.
    assert inductor._stepping_inductor("default", None) is None

    # The capture's own backend, on a problem of the CPU (the fake compile gives no module to
    # rewrite, which the capture then says; the order of lock steps is what is checked).
    lock.log.clear()
    torch._dynamo.reset()
    src = ("import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
           "        return torch.relu(x) * 2.0\n\ndef get_inputs():\n    return [torch.randn(4, 8)]\n\n"
           "def get_init_inputs():\n    return []\n")
    p = Problem(id="L1/relu", level=1, name="relu", source=src)
    try:
        inductor.capture(p, device="cpu", lock=lock)
    except inductor.RewriteError as e:
        assert "output modules" in str(e)
    assert lock.log == ["out", "compile(out=True)", "in", "run(out=False)"]
