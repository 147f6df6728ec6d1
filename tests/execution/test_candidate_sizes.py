"""A candidate that reads the problem's size globals (as KernelBench answers copied from the
problem file do) runs at the sizes the judge loads the problem at: the CPU sizes and the second
shape, through the real CPU executor and the in-process check."""
from __future__ import annotations

import pytest

from exec_fixtures import CPU_OPTIONS
from workbench.execution.candidate import at_sizes, candidate_sizes
from workbench.execution.executors import CPUExecutor
from workbench.execution.worker import Verdict, _import_candidate, check_correctness
from workbench.problems import load_source
from workbench.records import Candidate, Problem, Status

# A GRU whose initial state is drawn in __init__ from a size global get_init_inputs() does not
# pass (the idiom of KernelBench's level-3 RNN files). CPU batch 12 is not a power of two, so the
# CPU path has a second shape (batch 16) as well.
PROBLEM_SOURCE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, 1)
        self.h0 = torch.randn((1, batch_size, hidden_size))

    def forward(self, x):
        out, _ = self.gru(x, self.h0.to(x.device))
        return out


batch_size = 96
seq_len = 3
input_size = 8
hidden_size = 16
CPU_SIZES = {"batch_size": 12}


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
'''

# The answer as a model writes it: the problem file with the GRU written out step by step, the
# file's globals kept and read in __init__ (the state) and in forward (a view by batch_size).
CANDIDATE_SOURCE = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, 1)
        self.h0 = torch.randn((1, BATCH, hidden_size))

    def forward(self, x):
        w_ih, w_hh = self.gru.weight_ih_l0, self.gru.weight_hh_l0
        b_ih, b_hh = self.gru.bias_ih_l0, self.gru.bias_hh_l0
        h = self.h0.to(x.device).view(batch_size, -1)
        outs = []
        for t in range(x.shape[0]):
            gi = torch.addmm(b_ih, x[t], w_ih.t())
            gh = torch.addmm(b_hh, h, w_hh.t())
            i_r, i_z, i_n = gi.chunk(3, 1)
            h_r, h_z, h_n = gh.chunk(3, 1)
            r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
            n = torch.tanh(i_n + r * h_n)
            h = (1 - z) * n + z * h
            outs.append(h)
        return torch.stack(outs)


batch_size = 96
seq_len = 3
input_size = 8
hidden_size = 16
'''


# A size global read only in forward: a candidate's stale copy gives wrong numbers, not an error.
MEAN_SOURCE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x).sum(0) / batch_size


batch_size = 96
dim = 32
CPU_SIZES = {"batch_size": 12}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

MEAN_CANDIDATE = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=0.0).sum(0) * (1.0 / BATCH)


batch_size = 96
dim = 32
'''

# A hostile answer to MEAN: every name it controls asks for a batch of 2 (the problem's own
# CPU_SIZES, the loader's record of its overrides, the size globals, the input functions), and
# its forward is right only if the reference ran at that batch.
HOSTILE_MEAN = '''
import torch
import torch.nn as nn

CPU_SIZES = {"batch_size": 2}
__workbench_sizes__ = {"batch_size": 2}
batch_size = 2
dim = 32
seq_len = 2


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp(x[:2], min=0.0).sum(0) * 0.5
'''


def _candidate(batch: str) -> str:
    return CANDIDATE_SOURCE.replace("BATCH", batch)


PROBLEM = Problem(id="L3/90_gru_state_from_global", level=3, name="90_gru_state_from_global", source=PROBLEM_SOURCE,
                  origin="test")
MEAN = Problem(id="L1/90_mean_by_size_global", level=1, name="90_mean_by_size_global", source=MEAN_SOURCE,
               origin="test")


def test_candidate_reading_size_globals_is_measured_at_the_reduced_sizes():
    """Both honest answers are ok; without the problem's sizes applied to the candidate's module
    the first fails its warm-up (runtime_error: a state of the full batch) and the second is
    incorrect (a mean over the full batch). Controls: the same answers with the full batch
    written as a literal, which no size override reaches, are not ok. The hostile answer, which
    names the sizes it wants in every way a candidate can, is judged against the reference at
    the problem's own sizes (incorrect; ok only had the reference run at its batch of 2).
    One executor session for all five (each session starts its processes)."""
    state = [Candidate.from_source(PROBLEM.id, _candidate(b), origin="test") for b in ("batch_size", "96")]
    mean = [Candidate.from_source(MEAN.id, src, origin="test")
            for src in (MEAN_CANDIDATE.replace("BATCH", "batch_size"), MEAN_CANDIDATE.replace("BATCH", "96"),
                        HOSTILE_MEAN)]
    with CPUExecutor(workers=2, options=CPU_OPTIONS) as ex:
        futures = ex.submit(PROBLEM, state) + ex.submit(MEAN, mean)
        (ok_state, control_state, ok_mean, control_mean, hostile) = [f.result() for f in futures]
    assert ok_state.status is Status.OK, ok_state.reason
    assert ok_mean.status is Status.OK, ok_mean.reason
    assert control_state.status is Status.RUNTIME_ERROR, control_state
    assert control_mean.status is Status.INCORRECT, control_mean
    assert hostile.status is Status.INCORRECT, hostile


def test_in_process_check_runs_the_candidate_at_the_problems_sizes(tmp_path):
    lp = load_source(PROBLEM_SOURCE, name=PROBLEM.id, cpu=True)
    assert lp.overrides == {"batch_size": 12}
    mod = _import_candidate(_candidate("batch_size"), tmp_path, "gru_full")   # imported at full size
    assert mod.batch_size == 96
    check_correctness(lp.module, mod, "cpu", [0, 1], 16, "cpu size")
    second = load_source(PROBLEM_SOURCE, name=PROBLEM.id, sizes={"batch_size": 16}, cpu=True)
    check_correctness(second.module, mod, "cpu", [0], 16, "second shape")
    literal = _import_candidate(_candidate("96"), tmp_path, "gru_literal")
    with pytest.raises(Verdict):
        check_correctness(lp.module, literal, "cpu", [0], 16, "cpu size")


def test_only_the_problems_overrides_reach_only_the_candidates_own_names(tmp_path):
    src = "batch_size = 96\nBLOCK = 64\nCPU_SIZES = {'BLOCK': 2}\nclass ModelNew:\n    pass\n"
    # The candidate's own CPU_SIZES and names the problem does not override are left alone; a
    # problem override of a name the candidate does not assign adds nothing to its module.
    assert candidate_sizes(src, {"batch_size": 12, "seq_len": 2}) == {"batch_size": 12}
    mod = _import_candidate(src, tmp_path, "names", {"batch_size": 12, "seq_len": 2})
    assert (mod.batch_size, mod.BLOCK) == (12, 64) and not hasattr(mod, "seq_len")
    assert at_sizes(mod, {"batch_size": 12}) is mod
    again = at_sizes(mod, {"batch_size": 5})
    assert again is not mod and again.batch_size == 5 and mod.batch_size == 12


def test_a_candidate_naming_sizes_changes_neither_the_problems_sizes_nor_its_own_overrides(tmp_path):
    """The overrides come from the problem as loaded: a candidate's CPU_SIZES, its copy of the
    loader's record and its size globals reach neither the problem's module (loaded before or
    after it) nor the sizes the candidate itself is given; the in-process check judges it
    against the reference at the problem's sizes."""
    before = load_source(MEAN_SOURCE, name=MEAN.id, cpu=True)
    mod = _import_candidate(HOSTILE_MEAN, tmp_path, "hostile", before.overrides)
    # Its own size global follows the problem; the names the problem does not override keep the
    # candidate's values and are never given to the problem.
    assert mod.batch_size == 12 and mod.CPU_SIZES == {"batch_size": 2} and mod.__workbench_sizes__ == {"batch_size": 2}
    after = load_source(MEAN_SOURCE, name=MEAN.id, cpu=True)
    for lp in (before, after):
        assert lp.overrides == {"batch_size": 12} and lp.module.batch_size == 12
        assert [tuple(x.shape) for x in lp.get_inputs()] == [(12, 32)]
    with pytest.raises(Verdict) as caught:
        check_correctness(before.module, mod, "cpu", [0], 16, "cpu size")
    assert caught.value.status == "incorrect", caught.value.reason
