"""A small store of real shipped candidates of one problem, measured on H100 and H200, whose
measurement logs are known: each log names its candidate and GPU, and the H200 logs are recorded
the way older executors wrote them (a neighbour's section first). For the Inspector's tests."""
from __future__ import annotations

PROBLEM = "L1/01_softmax"
N_CANDIDATES = 12


def own_line(cid: str, gpu: str) -> str:
    """The line a candidate's own log holds in this store."""
    return f"own log of {cid} on {gpu}"


def make_two_gpu_store(path):
    """A Store at `path` with PROBLEM, its shipped seed kernel with the most children measured on
    both h100 and h200, and up to N_CANDIDATES - 1 of those children (so a replay search has
    more children of one parent than it measures)."""
    from collections import Counter
    from dataclasses import replace

    from workbench.dataset import load_shipped
    from workbench.store import Store

    rs = load_shipped()
    by_gpu: dict[str, dict[str, object]] = {"h100": {}, "h200": {}}
    for m in rs.measurements:
        if m.problem_id == PROBLEM and m.hardware_key in by_gpu:
            by_gpu[m.hardware_key][m.candidate_id] = m
    both = set(by_gpu["h100"]) & set(by_gpu["h200"])
    cands = {c.id: c for c in rs.candidates if c.problem_id == PROBLEM and c.id in both}
    roots = Counter(c.parent_id for c in cands.values() if c.parent_id in cands
                    and cands[c.parent_id].parent_id is None)
    root = max(sorted(roots), key=roots.__getitem__)
    kids = sorted(c.id for c in cands.values() if c.parent_id == root)[: N_CANDIDATES - 1]
    keep = [root, *kids]
    store = Store(path)
    store.put_problems([p for p in rs.problems if p.id == PROBLEM])
    store.put_candidates([cands[c] for c in keep])
    ms = []
    for i, cid in enumerate(keep):
        neighbour = keep[i - 1]
        ms.append(replace(by_gpu["h100"][cid], log=own_line(cid, "h100") + "\n"))
        ms.append(replace(by_gpu["h200"][cid], log=(f"=== candidate {neighbour} ===\n{own_line(neighbour, 'h200')}\n"
                                                     f"=== candidate {cid} ===\n{own_line(cid, 'h200')}\n")))
    store.put_measurements(ms)
    return store
