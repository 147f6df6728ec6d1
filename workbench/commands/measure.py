"""`workbench measure PROBLEM CANDIDATE.py [--gpu cuda:0|cpu]`: measure one candidate and
print a readable report (status, reason, times with 95% CIs, speedup, bin, log tail)."""
from __future__ import annotations

from pathlib import Path

from workbench import bins
from workbench.commands.common import add_contract_options, add_executor_options, contract_from_args, db_path
from workbench.compose import make_executor
from workbench.errors import CandidateError, ConfigError
from workbench.problems.registry import add_problem_file_option, problem_from_args
from workbench.records import Candidate, Measurement
from workbench.spec import Target
from workbench.textfile import read_source


def register(sub) -> None:
    p = sub.add_parser("measure", help="measure one candidate kernel against its problem's reference",
                       description="Runs the candidate in a sandboxed worker: correctness on several "
                       "seeds and a second shape, cheat guards, then CUDA-event timing of reference "
                       "and candidate on the same GPU. With --gpu cpu, Triton runs in its interpreter "
                       "at the problem's CPU sizes (a correctness check; CPU times are not GPU data).")
    p.add_argument("items", nargs="+", metavar="[PROBLEM] CANDIDATE",
                   help="problem id (L1/01_softmax, an imported L1/19_ReLU) or name (softmax), then "
                   "the path of a .py file defining ModelNew; only the candidate with --problem-file")
    add_problem_file_option(p)
    p.add_argument("--gpu", default="cuda:0", help="cuda:N (default cuda:0) or cpu")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds for compilation and correctness (default 300)")
    p.add_argument("--run-timeout", type=float, default=120.0, help="seconds for timing (default 120)")
    p.add_argument("--save", action="store_true", help="store the candidate and measurement in the database")
    add_contract_options(p)
    add_executor_options(p)
    p.set_defaults(handler=_measure)


def parse_device(text: str) -> Target:
    """The local target of `--gpu`: "cuda:N", "cuda", a bare "N" (cuda:N) or "cpu"
    (`Target.local`); anything else raises TargetError, a ConfigError."""
    return Target.local(text, bare_index=True, what="--gpu")


def _ms(v: float | None, lo: float | None, hi: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.4f} ms (95% CI {lo:.4f} - {hi:.4f})"


def report(m: Measurement, candidate: Candidate, log_lines: int = 20) -> str:
    """The human-readable report of one measurement."""
    lines = [f"problem:    {m.problem_id}", f"candidate:  {candidate.id} ({candidate.backend})",
             f"hardware:   {m.hardware_key}", f"status:     {m.status.value}",
             f"judged at:  {m.precision} precision, tolerance {m.tolerance}, {m.trials or '?'} trials"]
    if m.reason:
        lines.append(f"reason:     {m.reason}")
    if m.ok and m.candidate_ms is not None:
        lines.append(f"reference:  {_ms(m.reference_ms, m.reference_ci_low_ms, m.reference_ci_high_ms)}"
                     f", {m.reference_runs} runs")
        lines.append(f"candidate:  {_ms(m.candidate_ms, m.candidate_ci_low_ms, m.candidate_ci_high_ms)}"
                     f", {m.candidate_runs} runs")
        lines.append(f"speedup:    {m.speedup:.3f}x  (bin {m.bin + 1}: {bins.label(m.bin)})")
        if m.hardware_key == "cpu":
            lines.append("note:       CPU interpreter times; they say nothing about GPU speed")
    if m.compile_s is not None:
        lines.append(f"compile+check: {m.compile_s:.1f} s")
    if m.log.strip() and not m.ok:
        tail = m.log.strip().splitlines()[-log_lines:]
        lines.append("log tail:")
        lines.extend("  " + ln for ln in tail)
    return "\n".join(lines)


def split_items(args) -> tuple[str | None, str]:
    """(problem reference, candidate path) from the positional arguments: PROBLEM CANDIDATE, or
    CANDIDATE alone with --problem-file. ConfigError otherwise."""
    items = list(args.items)
    if getattr(args, "problem_file", None):
        if len(items) == 1:
            return None, items[0]
        if len(items) == 2:
            return items[0], items[1]
    elif len(items) == 2:
        return items[0], items[1]
    raise ConfigError(f"expected PROBLEM CANDIDATE.py, or CANDIDATE.py with --problem-file PATH; "
                      f"got {len(items)} argument(s): {' '.join(items)}")


def _measure(args) -> int:
    ref, cand_path = split_items(args)
    problem = problem_from_args(args, ref)
    path = Path(cand_path)
    source = read_source(path, "candidate", CandidateError)
    candidate = Candidate.from_source(problem.id, source, origin=f"file:{path.name}")
    target = parse_device(args.gpu).with_executor(getattr(args, "executor", "local"),
                                                getattr(args, "ray_address", None))
    # one candidate: one local worker; a Ray cluster places its task itself
    workers = {} if target.kind == "ray" else {"workers": 1}
    ex = make_executor(target, contract=contract_from_args(args), timeout_s=args.timeout,
                       run_timeout_s=args.run_timeout, **workers)
    with ex:
        m = ex.measure(problem, [candidate])[0]
    print(report(m, candidate))
    if args.save:
        from workbench.store import Store

        with Store(db_path(args)) as store:
            store.put_problem(problem)
            store.put_candidate(candidate)
            store.put_measurement(m)
        print(f"saved to {db_path(args)}")
    return 0 if m.ok else 3
