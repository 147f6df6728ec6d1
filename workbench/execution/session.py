"""One candidate judged by the timer: correctness trials and timed rounds through the gate.

Runs inside the timer process (timer.py), which never imports candidate code. Its two
endpoints are gates (gate.py) to the candidate's worker and to the clean reference worker;
every input is drawn here, from a seed drawn here and never sent anywhere, and every output
is compared here.

Trials (all checked): for each of the run's trials (the contract's, `workbench.problems.
contract`: one per seed of the job) a call on fresh inputs, a call on the first
trial's inputs with one element changed (a cache keyed by a partial fingerprint returns the
old answer), and a call at the problem's second shape; the reference and the candidate run
on the same inputs, in a random order. Rounds (timed): fresh inputs each round; the candidate,
the reference and a null call (the reference worker copying a stored output: the gate's own
cost) in alternating order; while the reference or the null call is timed the candidate's
processes are stopped (gate.Freezer). A round's reference and candidate are each a batch of
calls between two marks of the gate's clock, one fresh input set per call (the same sets for
both): the gate costs a crossing per batch, not per call, and a batch lasts at least
BATCH_TARGET times the null call, as far as BATCH_BYTES of input sets allow (choose_batch,
from the warm-up's rounds of one call each; the reference alone is timed at the same batch).
Each round is checked with probability CHECK_SHARE, decided after its clock stopped: every
call's outputs and inputs are copied at once and compared with the reference's outputs of the
same inputs. Every comparison uses the run's tolerance (the contract's; the inputs and both
models are at its precision already, as the problem was loaded).
"""
from __future__ import annotations

import math
import random
import secrets
import statistics
import time
from typing import Any, Callable, Sequence

from workbench.execution import correctness, guards, protocol, timing
from workbench.execution.gate import (MAX_BATCH, Freezer, Link, LinkClosed, LinkTimeout, changed, make_layout,
                                      poison, views, write_inputs)

#: Share of timed candidate calls whose outputs are checked (chosen after each call) on a GPU;
#: the job's `check_share` option overrides it (the CPU executor checks every call).
CHECK_SHARE = 0.5
#: Outputs up to this many elements are compared whole; larger ones at SAMPLE positions.
FULL_COMPARE_MAX, SAMPLE = 1 << 24, 1 << 22
#: The reference timed alone stops after this much timed work (ms) if its precision targets
#: were not met before: it is the check of the reference's time beside a candidate.
ALONE_MAX_MS = 300.0
#: A batch of calls lasts at least this many times the gate's own cost (the null call), so the
#: gate's jitter moves a call's time by a tenth of that at most.
BATCH_TARGET = 10.0
#: ... unless the slower side's batch would last longer than this (ms).
BATCH_MAX_MS = 50.0
#: Room for a batch's extra input sets, per arena (the reference's and the candidate's), bytes.
#: None (0) on the CPU: there the gate costs tens of microseconds against calls of milliseconds.
BATCH_BYTES = {"cuda": 2 * 2**30, "cpu": 0}
#: The share of each float input the nudged trial call takes from another input set.
NUDGE_SHARE = 1 / 8
#: A timed call's output at most this many times outside the tolerance is called once more on
#: the same inputs before it is judged (session._timed_mismatch); further out it is a cheat.
MARGINAL = 4.0


class _Parts:
    """Wall seconds per named part of a session's gate work (diagnostics: `phases_s["gate"]`)."""

    def __init__(self) -> None:
        self.s: dict[str, float] = {}

    def add(self, name: str, t0: float) -> float:
        now = time.perf_counter()
        self.s[name] = self.s.get(name, 0.0) + now - t0
        return now


class Finding(Exception):
    """Ends a session with a status and a reason (`outputs`: the candidate's, when it failed
    a comparison)."""

    def __init__(self, status: str, reason: str, outputs: list | None = None):
        super().__init__(reason)
        self.status, self.reason, self.outputs = status, reason, outputs


class Endpoint:
    """The timer's end of one worker's link: the worker's arenas (one per problem key), the
    gate's clock, and the freezer of the worker's processes (None for the clean worker)."""

    def __init__(self, link: Link, clock: Any, new_arena: Callable[[int], Any], freezer: Freezer | None = None,
                 who: str = "candidate", imports: Any = None):
        self.link, self.clock, self.new_arena, self.freezer, self.who = link, clock, new_arena, freezer, who
        self.imports = imports     # gate_cuda.Imports: the worker's shared outputs (GPU), else None
        self.pid: int | None = None    # the clean worker's process, watched for being stopped
        self.arenas: dict[str, tuple[Any, dict]] = {}
        self.calls = 0
        self.self_ms: list[float] = []
        self.broken = ""          # why this link cannot be used again ("" while it can)
        self.failed_arenas: list = []
        self.parts = _Parts()     # where this end's calls spend their wall time (set by the session)

    def _recv(self, deadline: float) -> dict:
        """The worker's next message, or a Finding naming what went wrong with the link."""
        try:
            return self.link.recv(max(0.01, deadline - time.monotonic()))
        except LinkTimeout as e:
            self.broken = "timeout"
            raise Finding("timeout", f"the {self.who}'s worker did not answer the judge in time") from e
        except (LinkClosed, OSError) as e:
            self.broken = "closed"
            raise Finding("crashed", f"the {self.who}'s worker ended during the judge's session") from e
        except protocol.ProtocolError as e:
            self.broken = "protocol"
            raise Finding("crashed", f"the {self.who}'s worker wrote a malformed message to the judge ({e})") from e

    def setup(self, key: str, layout: dict, deadline: float) -> None:
        """Give the worker its arena for `key` (once), or tell it a later session begins."""
        if key in self.arenas:
            self.link.send({"type": "resume", "key": key})
            self._expect("setup-ok", deadline)
            return
        arena = self.new_arena(layout["nbytes"])
        try:
            info, fds = arena.export()
            self.link.send({"type": "setup", "key": key, "layout": layout, "arena": info,
                            "clock": self.clock.export()})
            if fds:
                self._expect("send-fds", deadline)
                self.link.send_fds(fds)
            self._expect("setup-ok", deadline)
        except BaseException:
            # Not the worker's arena unless it said so; freed once the worker is gone (it may
            # have mapped it), so kept aside until then.
            self.failed_arenas.append(arena)
            raise
        self.arenas[key] = (arena, layout)

    def _expect(self, kind: str, deadline: float) -> dict:
        msg = self._recv(deadline)
        if msg.get("type") != kind:
            raise Finding("crashed", f"the {self.who}'s worker answered {str(msg.get('type'))[:40]!r} where the "
                          f"judge expected {kind!r}: {str(msg.get('error', ''))[:500]}")
        return msg

    def buffers(self, key: str, slot: str) -> tuple[list, list]:
        arena, layout = self.arenas[key]
        s = layout["slots"][slot]
        return views(arena.base, s["inputs"]), views(arena.base, s["outputs"])

    def _outputs(self, reply: dict, key: str, slot: str, outs: list) -> list:
        """The call's outputs: the arena's (CPU), or the memory the worker shared (GPU)."""
        ents = self.arenas[key][1]["slots"][slot]["outputs"]
        if self.imports is None:
            return outs
        shared = reply.get("outputs")
        if not isinstance(shared, list) or len(shared) != len(ents):
            raise Finding("crashed", f"the {self.who}'s worker did not say where its outputs are")
        try:
            return [self._in_arena(key, sh, e) if isinstance(sh, dict) and "arena" in sh
                    else self.imports.tensor(sh, e) if e["kind"] == "tensor" else None
                    for sh, e in zip(shared, ents)]
        except (ValueError, RuntimeError, TypeError) as err:
            raise Finding("crashed", f"the {self.who}'s worker shared output memory the judge cannot map: {err}") from err

    def _in_arena(self, key: str, shared: dict, entry: dict):
        """An output the worker wrote into the arena this end handed it (e.g. into an input)."""
        import torch

        if entry["kind"] != "tensor":
            return None
        base = self.arenas[key][0].base
        dt = getattr(torch, entry["dtype"])
        size = torch.empty(0, dtype=dt).element_size()
        n = math.prod(entry["shape"]) * size
        off = shared["arena"]
        if not isinstance(off, int) or off < 0 or off + n > base.numel() or off % size:
            raise ValueError(f"an output of {n} bytes at arena offset {off!r} does not fit the arena")
        return base[off:off + n].view(dt).view(entry["shape"])

    def call(self, key: str, slot: str, x: Sequence[Any], deadline: float, check: bool = False,
             view: bool = False, more: Sequence[tuple[str, Sequence[Any]]] = ()) -> dict:
        """One call through the gate on inputs `x` (and, for a batch, one on each (slot, inputs)
        of `more`, between the same marks of the clock); returns {"ms" (the whole batch),
        "values"}, with `check` "outputs" (copies taken right after the clock stopped) and
        "inputs_changed", with `view` "outputs" as they are (the clean worker's, read before
        its next call), and for a batch "more": the same for each extra call."""
        import torch

        if self.pid is not None and _stopped(self.pid):
            raise Finding("cheat_suspected", f"the judge's {self.who} worker was stopped by another process during "
                          "the session")
        calls = [(slot, x)] + list(more)
        bufs = [self.buffers(key, s) for s, _ in calls]
        t = time.perf_counter()

        def prep() -> None:
            for (ins, outs), (_, xs) in zip(bufs, calls):
                write_inputs(ins, xs)
                poison(outs)

        self.calls += 1
        self.clock.arm(prep)
        t = self.parts.add("arm", t)
        values = [None if isinstance(v, torch.Tensor) else v for v in x]
        msg = {"type": "call", "id": self.calls, "key": key, "slot": slot, "values": values}
        if more:
            msg["more"] = [s for s, _ in more]
        try:
            self.link.send(msg)
        except OSError as e:
            self.broken = "closed"
            raise Finding("crashed", f"the {self.who}'s worker ended during the judge's session") from e
        reply = self._recv(deadline)
        self.clock.stop()
        t = self.parts.add("reply", t)
        extra = reply.get("more") if reply.get("ok") and more else []
        if more and reply.get("ok") and (not isinstance(extra, list) or len(extra) != len(more)
                                         or not all(isinstance(m, dict) for m in extra)):
            self.broken = "protocol"
            raise Finding("crashed", f"the {self.who}'s worker did not answer every call of the batch")
        parts = [reply] + list(extra)
        each: list[dict[str, Any]] = []
        for part, (s, xs), (ins, outs) in zip(parts, calls, bufs):
            one: dict[str, Any] = {}
            if reply.get("ok") and (check or view):
                found = self._outputs(part, key, s, outs)
                one["outputs"] = [o.clone() if isinstance(o, torch.Tensor) else o for o in found] if check else found
            if check:
                one["inputs_changed"] = changed(ins, xs)
            vals = part.get("values") or []
            one["values"] = list(vals) if isinstance(vals, list) else []
            each.append(one)
        got: dict[str, Any] = dict(each[0])
        if more:
            got["more"] = each[1:]
        if reply.get("type") != "enqueued" or reply.get("id") != self.calls:
            self.broken = "protocol"
            raise Finding("crashed", f"the {self.who}'s worker answered out of protocol "
                          f"({str(reply.get('type'))[:40]!r}, call {str(reply.get('id'))[:20]})")
        if not reply.get("ok"):
            raise Finding(str(reply.get("status", "runtime_error")), str(reply.get("reason", ""))[:4000])
        t = self.parts.add("outputs", t)
        try:
            got["ms"] = self.clock.elapsed_ms(deadline)
            self.parts.add("device", t)
        except TimeoutError as e:
            self.broken = "stuck"
            raise Finding("timeout", f"the {self.who}'s call did not finish on the device in time") from e
        if isinstance(reply.get("self_ms"), (int, float)):
            self.self_ms.append(float(reply["self_ms"]))
        return got

    def close(self) -> None:
        """Unmap and free what this end holds (the worker is gone, or is the clean one and unmapped)."""
        self.link.close()
        if self.imports is not None:
            self.imports.close()
        for arena in [a for a, _ in self.arenas.values()] + self.failed_arenas:
            arena.close()
        self.arenas.clear()
        self.failed_arenas.clear()


def _stopped(pid: int) -> bool:
    """Whether `pid` is stopped (a signal from outside); it is let go on at once."""
    import os
    import signal

    from workbench.execution.gate import _state

    if _state(pid) not in ("T", "t"):
        return False
    try:
        os.kill(pid, signal.SIGCONT)
    except OSError:
        pass
    return True


# --------------------------------------------------------------------------- comparisons
def compare(cand: Sequence[Any], ref: Sequence[Any], cand_values: Sequence[Any], ref_values: Sequence[Any],
            reduced_k: int, matmul_like: bool, gen=None, contract: Any = None) -> tuple[bool, str]:
    """(ok, reason): the candidate's outputs of one call against the reference's (same layout),
    with correctness.compare_outputs at the run's `contract` (`workbench.problems.contract.
    Contract`; None: the project's rules); outputs over FULL_COMPARE_MAX elements at SAMPLE
    positions drawn from `gen`."""
    import torch

    for i, (c, r) in enumerate(zip(cand, ref)):
        tag = f"output {i}" if len(ref) > 1 else "output"
        if not isinstance(r, torch.Tensor):
            cv = cand_values[i] if i < len(cand_values) else None
            rv = ref_values[i] if i < len(ref_values) else None
            if cv != rv:
                return False, f"{tag}: {cv!r} != reference {rv!r}"
            continue
        where = ""
        if r.numel() > FULL_COMPARE_MAX:
            idx = torch.randint(0, r.numel(), (SAMPLE,), device=r.device, generator=gen)
            c, r = c.reshape(-1)[idx], r.reshape(-1)[idx]
            where = f" (at {SAMPLE} sampled positions)"
        ok, why = correctness.compare_outputs(c, r, reduced_k, matmul_like, contract)
        if not ok:
            return False, why.replace("output:", f"{tag}:", 1) + where
    return True, ""


def same(a: Sequence[Any], b: Sequence[Any]) -> bool:
    import torch

    return all(torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y for x, y in zip(a, b))


def nudged(x: Sequence[Any], other: Sequence[Any] | None = None) -> list:
    """`x` with the last element of each float tensor changed and, given `other` (another
    input set of the same slot), the last NUDGE_SHARE of its elements taken from it. A result
    kept under a fingerprint of a few elements is stale on these inputs, and by more than any
    tolerance: one changed element alone can stay within it (a softmax row of thousands)."""
    import torch

    out = [t.clone() if isinstance(t, torch.Tensor) else t for t in x]
    for i, t in enumerate(out):
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
            flat = t.view(-1)
            o = other[i] if other is not None and i < len(other) else None
            if isinstance(o, torch.Tensor) and o.shape == t.shape and o.dtype == t.dtype:
                n = max(1, int(t.numel() * NUDGE_SHARE))
                flat[-n:] = o.reshape(-1)[-n:]
            flat[-1] += 1.5
    return out


# --------------------------------------------------------------------------- the problem
class Problem:
    """A problem as the timer judges it: its shapes (LoadedProblem per slot), the layout of
    the arenas (with `max_batch` - 1 extra input sets of the full size: slots "full.1", ...),
    tolerances, and the reference timed alone (`alone`: gate samples per batch size)."""

    def __init__(self, key: str, shapes: dict, out_entries: dict[str, list[dict]], reduced_k: dict[str, int],
                 matmul_like: bool, device: str):
        from workbench.execution.models import make_inputs

        self.key, self.shapes, self.device = key, shapes, device
        self.reduced_k, self.matmul_like = reduced_k, matmul_like
        examples = {name: (make_inputs(lp.module, device), out_entries[name]) for name, lp in shapes.items()}
        host = not device.startswith("cuda")
        full_bytes = sum(t.numel() * t.element_size() for t in examples["full"][0] if hasattr(t, "numel"))
        if host:     # on the CPU the outputs of each call take room in the arena too
            full_bytes += sum(e.get("nbytes", 0) for e in out_entries["full"])
        budget = BATCH_BYTES["cpu" if host else "cuda"]
        fits = max(1, min(MAX_BATCH, budget // max(full_bytes, 1)))
        self.max_batch = 1 << (fits.bit_length() - 1)      # choose_batch picks powers of two only
        for i in range(1, self.max_batch):
            examples[f"full.{i}"] = examples["full"]
        self.cand_layout = make_layout(examples, outputs_in_arena=host)
        self.ref_layout = make_layout({**examples, "null": ([], out_entries["full"] if host else [])},
                                      outputs_in_arena=host)
        #: The reference timed alone, per batch size (the judge's own work, once per problem
        #: and size): gate samples of "reference" and "null".
        self.alone: dict[int, dict[str, list[float]]] = {}

    def fresh(self, slot: str) -> list:
        from workbench.execution.models import make_inputs

        return make_inputs(self.shapes[slot].module, self.device)


def drained(device: str, deadline: float) -> bool:
    """Whether the timer's own device work (which may wait on a worker's event) finished
    before `deadline` (time.monotonic()); never blocks past it."""
    if not device.startswith("cuda"):
        return True
    import torch

    ev = torch.cuda.Event()
    ev.record()
    while not ev.query():
        if time.monotonic() > deadline:
            return False
        time.sleep(1e-4)
    return True


class Session:
    """One candidate's trials and timed rounds (see module doc); `run()` returns the report."""

    def __init__(self, prob: Problem, cand: Endpoint, ref: Endpoint, seeds: Sequence[int], timing_opts: dict,
                 deadline: float, busy: Callable[[], float] | None = None, repeats: int = 1,
                 check_share: float = CHECK_SHARE, timing_s: float = 120.0, contract: Any = None,
                 clock: Callable[[], float | None] | None = None,
                 quiet: Callable[[], float | None] | None = None,
                 hold: Callable[[], None] | None = None):
        import torch

        self.p, self.cand, self.ref = prob, cand, ref
        # The run's contract (`workbench.problems.contract.Contract`; None: the default): the
        # tolerance every comparison uses, and its trials (the job's seeds) the trial count.
        self.contract = contract
        self.n_trials = max(1, int(getattr(contract, "trials", None) or len(seeds)))
        # `deadline` (time.monotonic()) bounds the trials; the timed rounds get `timing_s`
        # seconds of their own once the trials are done (the job's two budgets).
        self.opts, self.deadline, self.busy, self.repeats = timing_opts, deadline, busy, max(1, int(repeats))
        self.timing_s = float(timing_s)
        self.share = min(1.0, max(0.0, float(check_share)))
        self.rng = random.Random(secrets.randbits(64))
        self.gen = torch.Generator(device=prob.device)
        self.gen.manual_seed(secrets.randbits(63))
        torch.manual_seed(secrets.randbits(63))
        self.checked = 0
        self.batch = 1            # calls per gate crossing in this session's rounds (choose_batch)
        # The GPU's SM clock (MHz) read right after each timed reference call, when `clock`
        # (gate_cuda.SmClock.read) is given: what the reference ran at beside the candidate
        # and alone (report["sm_mhz"]).
        self.clock, self.mhz = clock, []
        # `quiet()` (the timer's: every other worker and the candidate stopped, wait until the
        # GPU is idle; None when it is, else the busy ratio it stayed at) runs before the
        # reference is timed alone, so work the candidate left queued on the GPU cannot slow
        # the "alone" times the verdict compares with (and caches for the problem).
        self.quiet = quiet
        # `hold()` (the timer's Others.keep) at the start of every round and alone timing: while
        # the executor's other workers are stopped, one started since is stopped too.
        self.hold = hold or (lambda: None)
        self.parts = cand.parts = ref.parts = _Parts()

    # ------------------------------------------------------------------ trials
    def _trial(self, slot: str, x: list, label: str, prev: list | None) -> list:
        order = ["ref", "cand"] if self.rng.random() < 0.5 else ["cand", "ref"]
        got = {}
        for who in order:
            if who == "ref":
                self._frozen(True)
                got["ref"] = self.ref.call(self.p.key, slot, x, self.deadline, view=True)
            else:
                self._frozen(False)
                got["cand"] = self.cand.call(self.p.key, slot, x, self.deadline, check=True)
        self._frozen(False)
        self._judge_outputs(got["cand"], got["ref"]["outputs"], got["ref"]["values"], slot, label, prev, timed=False)
        return got["cand"]["outputs"]

    def _judge_outputs(self, c: dict, ref_outs: list, ref_values: list, slot: str, label: str,
                       prev: list | None, timed: bool, timed_inputs: list | None = None) -> None:
        self.checked += 1
        flag = c["inputs_changed"]
        if flag is not None and bool(flag):
            raise Finding("cheat_suspected", f"{label}: the candidate modified its inputs in place")
        ok, why = compare(c["outputs"], ref_outs, c["values"], ref_values, self.p.reduced_k[slot],
                          self.p.matmul_like, self.gen, self.contract)
        if ok:
            return
        if timed:
            raise self._timed_mismatch(c, ref_outs, ref_values, timed_inputs, why)
        if prev is not None and same(c["outputs"], prev):
            raise Finding("cheat_suspected", f"{label}: returned the previous call's result (results cached "
                          "across calls)")
        deg = guards.degenerate_finding(c["outputs"][0], ref_outs[0]) if c["outputs"] else None
        if deg:
            raise Finding("cheat_suspected", f"{deg}; {label}: {why}")
        raise Finding("incorrect", f"{label}: {why}", c["outputs"])

    def _timed_mismatch(self, c: dict, ref_outs: list, ref_values: list, x: list | None, why: str) -> Finding:
        """The finding for a timed call whose outputs are out of tolerance. Far outside it (more
        than MARGINAL times): the candidate computes something else while timed. Just outside
        it: the same inputs `x` are called once more, alone; an answer within the tolerance then
        means the candidate is less accurate while timed (cheat_suspected), the same miss again
        means it is not accurate enough on every input (incorrect: an honest kernel whose
        rounding differs, e.g. a long sum in another order, on an unlucky input)."""
        import torch

        base = f"checked by the judge: a timed run's output differs from the reference ({why})"
        ratio = correctness.tolerance_ratio(c["outputs"], ref_outs, self.p.reduced_k["full"], self.p.matmul_like,
                                            self.contract)
        if x is None or not ratio <= MARGINAL:
            return Finding("cheat_suspected", f"{base}: the candidate computes something else while it is timed")
        ref_keep = [o.clone() if isinstance(o, torch.Tensor) else o for o in ref_outs]
        self._frozen(False)
        again = self.cand.call(self.p.key, "full", x, self.deadline, check=True)
        ok, _ = compare(again["outputs"], ref_keep, again["values"], ref_values, self.p.reduced_k["full"],
                        self.p.matmul_like, self.gen, self.contract)
        if ok:
            return Finding("cheat_suspected", f"{base}; called once more alone on the same inputs it answers within "
                           "the tolerance: the candidate is less accurate while it is timed")
        return Finding("incorrect", f"timed call: {why} ({ratio:.2f} times the tolerance), and out of tolerance again "
                       "when called once more on the same inputs: not accurate enough on every input")

    def trials(self) -> None:
        prev = None
        first = None
        for i in range(self.n_trials):
            x = self.p.fresh("full")
            try:
                prev = self._trial("full", x, f"full size, trial {i + 1}", prev)
            except Finding as f:
                if i == 0 and f.status == "incorrect" and f.outputs is not None:
                    # Wrong on the first inputs it saw here: the same answer again for other
                    # inputs is a result kept from a call before (its own warm-up).
                    again = self.cand.call(self.p.key, "full", self.p.fresh("full"), self.deadline, check=True)
                    if same(again["outputs"], f.outputs):
                        raise Finding("cheat_suspected", f"{f.reason}; it returned the same result for other inputs "
                                      "(the previous call's result: results cached across calls)") from None
                raise
            if first is None:
                first = x
                prev = self._trial("full", nudged(x, self.p.fresh("full")),
                                   "full size, call with the last part of each input changed", prev)
        if "second" in self.p.shapes:
            self._trial("second", self.p.fresh("second"), "second shape", None)

    # ------------------------------------------------------------------ rounds
    def _frozen(self, yes: bool) -> None:
        if self.cand.freezer is not None:
            t = time.perf_counter()
            (self.cand.freezer.freeze if yes else self.cand.freezer.thaw)()
            self.parts.add("freeze" if yes else "thaw", t)

    def _batch(self) -> tuple[list, list[tuple[str, list]]]:
        """A round's input sets: the first call's, and (slot, inputs) for the batch's others."""
        t = time.perf_counter()
        x = self.p.fresh("full")
        out = x, [(f"full.{i}", self.p.fresh("full")) for i in range(1, self.batch)]
        self.parts.add("inputs", t)
        return out

    def _round(self, r: int, samples: dict[str, list[float]] | None) -> None:
        self.hold()
        x, more = self._batch()
        order = ["null", "ref", "cand"] if r % 2 == 0 else ["cand", "ref", "null"]
        check = self.rng.random() < self.share
        got: dict[str, dict] = {}
        for who in order:
            if who == "cand":
                self._frozen(False)
                got[who] = self.cand.call(self.p.key, "full", x, self.deadline, check=check, more=more)
            elif who == "ref":
                self._frozen(True)
                got[who] = self.ref.call(self.p.key, "full", x, self.deadline, view=check, more=more)
                self._read_clock(self.mhz)
            else:
                self._frozen(True)
                got[who] = self.ref.call(self.p.key, "null", [], self.deadline)
            if check and "cand" in got and "ref" in got and "judged" not in got:
                got["judged"] = {}
                t = time.perf_counter()
                cands = [got["cand"]] + got["cand"].get("more", [])
                refs = [got["ref"]] + got["ref"].get("more", [])
                for c, ref, xs in zip(cands, refs, [x] + [m for _, m in more]):
                    self._judge_outputs(c, ref["outputs"], ref["values"], "full", "timed", None, timed=True,
                                        timed_inputs=xs)
                self.parts.add("compare", t)
        if samples is not None:
            for who, key in (("ref", "reference"), ("cand", "candidate"), ("null", "null")):
                samples[key].append(got[who]["ms"])

    def _wait_quiet(self, when: str) -> None:
        ratio = self.quiet() if self.quiet is not None else None
        if ratio is not None:
            raise Finding("cheat_suspected", f"with the candidate and the executor's other workers stopped, the GPU "
                          f"stayed busy ({ratio:.1f}x the judge's own work time) {when}: work the candidate left "
                          "running")

    def _read_clock(self, into: list[float]) -> None:
        mhz = self.clock() if self.clock is not None else None
        if mhz:
            into.append(mhz)

    def warm_up(self) -> dict[str, list[float]]:
        """The warm-up's count of rounds (`warmup`) at one call per crossing: their samples
        choose the batch (choose_batch). The warm-up at the chosen batch (its count and its
        timed work, `warmup_ms`) starts each rounds()."""
        warm: dict[str, list[float]] = {"reference": [], "candidate": [], "null": []}
        for r in range(max(1, int(self.opts.get("warmup", 3)))):
            self._round(r, warm)
        return warm

    def max_rounds(self) -> int:
        """Timed rounds at most: `max_runs` counts calls of each side, as a timer of one call
        per sample does (timing.interleaved_samples); a round of the session's batch times
        `batch` calls of each, and is one sample. Never under `min_runs`."""
        o = self.opts
        return max(int(o.get("min_runs", 5)), math.ceil(int(o.get("max_runs", 100)) / max(1, self.batch)))

    def rounds(self) -> dict[str, list[float]]:
        o = self.opts
        # Warm-up at the session's batch: `warmup` rounds and `warmup_ms` of timed work.
        r, spent = 0, 0.0
        scratch: dict[str, list[float]] = {"reference": [], "candidate": [], "null": []}
        while r < max(1, int(o.get("warmup", 3))) or (spent < float(o.get("warmup_ms", 0.0)) and r < 1000):
            self._round(r, scratch)
            spent += scratch["reference"][-1] + scratch["candidate"][-1]
            r += 1
        samples: dict[str, list[float]] = {"reference": [], "candidate": [], "null": []}
        self.mhz = []
        t_start = time.monotonic()
        for k in range(self.max_rounds()):
            self._round(r + k, samples)
            n = k + 1
            if n < int(o.get("min_runs", 5)):
                continue
            if sum(samples["reference"]) + sum(samples["candidate"]) >= 2 * float(o.get("max_total_ms", 2000.0)):
                break
            if all(timing._precise_enough(samples[s], o.get("target_sem_pct"), o.get("target_ci_pct"))
                   for s in ("reference", "candidate")):
                break
            per_round = (time.monotonic() - t_start) / n
            if time.monotonic() + 2 * per_round > self.deadline:
                break
        return samples

    def alone(self, max_ms: float = ALONE_MAX_MS) -> dict[str, list[float]]:
        """The reference and the null call timed with no candidate call between them (the
        candidate, if any, stopped)."""
        self._frozen(True)
        try:
            o = {**self.opts, "max_total_ms": min(float(self.opts.get("max_total_ms", 2000.0)), max_ms)}
            out: dict[str, list[float]] = {"reference": [], "null": []}
            mhz: list[float] = []
            for r in range(int(o.get("warmup", 3)) + self.max_rounds()):
                self.hold()
                x, more = self._batch()
                pair = [("reference", "full", x, more), ("null", "null", [], [])]
                for who, slot, xs, extra in (pair if r % 2 == 0 else pair[::-1]):
                    ms = self.ref.call(self.p.key, slot, xs, self.deadline, more=extra)["ms"]
                    if r >= int(o.get("warmup", 3)):
                        out[who].append(ms)
                        if who == "reference":
                            self._read_clock(mhz)
                n = len(out["reference"])
                if n >= int(o.get("min_runs", 5)) and (
                        sum(out["reference"]) >= float(o["max_total_ms"])
                        or timing._precise_enough(out["reference"], o.get("target_sem_pct"), o.get("target_ci_pct"))):
                    break
            if mhz:
                out["sm_mhz"] = mhz
            return out
        finally:
            self._frozen(False)

    # ------------------------------------------------------------------ all
    def run(self, time_it: bool = True) -> dict:
        from workbench.execution.reference import reference_finding
        from workbench.execution.timing import summarise

        report: dict[str, Any] = {"status": "ok", "reason": ""}
        # Wall seconds of each part of the session (where a session's time goes).
        phases = report["phases_s"] = {}
        t = time.monotonic()

        def lap(name: str) -> None:
            nonlocal t
            now = time.monotonic()
            phases[name] = round(now - t, 4)
            t = now
        try:
            self.trials()
            lap("trials")
            report["trials"] = self.checked
            if time_it:
                self.deadline = time.monotonic() + self.timing_s
                try:
                    # One call per crossing first: the warm-up's times choose the batch.
                    self.batch = 1
                    self.batch = choose_batch(self.warm_up(), self.p.max_batch)
                    lap("warm_up")
                    if self.batch not in self.p.alone:
                        # The judge's own work, once per problem and batch: not the candidate's budget.
                        left = self.deadline - time.monotonic()
                        self.deadline = time.monotonic() + max(60.0, self.timing_s)
                        self._wait_quiet("before the reference was timed alone")
                        self.p.alone[self.batch] = self.alone()
                        self.deadline = time.monotonic() + left
                        lap("alone")
                    repeats = [self.rounds() for _ in range(self.repeats)]
                    lap("rounds")
                except Finding as f:
                    if f.status == "timeout":
                        f.reason = f"timing took longer than {self.timing_s:.0f} s ({f.reason})"
                    raise
                samples = repeats[0]
                report["samples"] = samples
                beside_mhz = list(self.mhz)
                report["batch"] = self.batch
                if len(repeats) > 1:
                    report["repeats"] = repeats
                alone = report["alone"] = self.p.alone[self.batch]
                if reference_finding(samples["reference"], summarise(alone["reference"]).to_dict(), self.p.device):
                    # A second look, with the candidate stopped: is the GPU busy with its work,
                    # and is the reference slow alone too (the machine got slower)?
                    self._frozen(True)
                    try:
                        report["busy_ratio"] = self.busy() if self.busy is not None else None
                    finally:
                        self._frozen(False)
                    self._wait_quiet("before the reference was timed alone again")
                    report["retime"] = self.alone()
                mhz = {"beside": beside_mhz, "alone": alone.get("sm_mhz") or [],
                       "retime": (report.get("retime") or {}).get("sm_mhz") or []}
                if any(mhz.values()):
                    report["sm_mhz"] = {k: statistics.median(v) for k, v in mhz.items() if v}
        except Finding as f:
            report.update(status=f.status, reason=f.reason)
        finally:
            self._frozen(False)
        report["checked"] = self.checked
        phases["gate"] = {k: round(v, 4) for k, v in self.parts.s.items()}
        report["self_ms"] = {"reference": self.ref.self_ms[-200:], "candidate": self.cand.self_ms[-200:]}
        if not drained(self.p.device, max(self.deadline, time.monotonic() + 10.0)):
            self.ref.broken = self.cand.broken = "stuck"
            if report["status"] == "ok":
                report.update(status="timeout", reason="the candidate's device work did not finish in time")
        return report


def choose_batch(warm: dict[str, list[float]], max_batch: int) -> int:
    """Calls per gate crossing, from rounds of one call each (`warm`: gate samples of the
    reference, the candidate and the null call): enough that the faster one's batch lasts
    BATCH_TARGET times the null call (the gate's own cost), unless the slower one's batch
    would pass BATCH_MAX_MS; at most `max_batch`; a power of two (the reference is timed alone
    once per batch size)."""
    null = warm.get("null") or []
    works = [statistics.median(warm[k]) for k in ("reference", "candidate") if warm.get(k)]
    if not (null and works):
        return 1
    gate = statistics.median(null)
    fast, slow = min(works) - gate, max(works) - gate
    k = max_batch if fast <= 0 else math.ceil(BATCH_TARGET * gate / fast)
    if slow > 0:
        k = min(k, math.floor(BATCH_MAX_MS / slow))
    k = max(1, min(k, max_batch))
    return 1 << (k.bit_length() - 1)


def finite(xs: Sequence[float]) -> bool:
    return bool(xs) and all(isinstance(x, (int, float)) and math.isfinite(x) for x in xs)
