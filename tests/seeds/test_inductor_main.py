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

    def fake_seed_for(p, device="cuda"):
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
