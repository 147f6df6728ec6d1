"""Dataset stats: counts per problem, status, bin and GPU from any source."""
from __future__ import annotations

from collections import Counter

from workbench import bins
from workbench.dataset import stats, write_shipped


def test_counts_match_the_records(store, records):
    _, _, ms = records
    st = stats(store)
    assert st.measurements == len(ms)
    assert st.by_gpu == dict(Counter(m.hardware_key for m in ms))
    assert st.by_status == dict(Counter(m.status.value for m in ms))
    assert st.by_problem == dict(Counter(m.problem_id for m in ms))
    assert list(st.by_bin) == list(bins.LABELS)
    expected = Counter(bins.label(bins.bin_of(m.speedup)) for m in ms if m.ok)
    assert st.by_bin == {lab: expected.get(lab, 0) for lab in bins.LABELS}
    assert sum(st.by_bin.values()) == st.by_status["ok"]
    assert st.problems == 2 and st.candidates == len({m.candidate_id for m in ms})


def test_gpu_filter_and_sources_agree(tmp_path, store, records):
    h100 = stats(store, hardware_key="h100")
    assert set(h100.by_gpu) == {"h100"}
    assert h100.measurements == sum(m.hardware_key == "h100" for m in records[2])
    assert stats(records, hardware_key="h100") == h100
    write_shipped(store, tmp_path / "shipped")
    assert stats(tmp_path / "shipped", hardware_key="h100") == h100
    assert stats(store, hardware_key="nope").measurements == 0
