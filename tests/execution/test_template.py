"""Chunk workers forked from a template process (template.py): contained as an exec'd worker is,
reported as a Popen is, and never forked from a template that holds a second thread (CPU)."""
from __future__ import annotations

import base64
import json
import os
import signal
import sys
import time

import pytest

from exec_fixtures import CPU_OPTIONS, load_fixtures
from workbench.execution import contain, template
from workbench.execution.executors import ChunkedExecutor
from workbench.execution.hardware import cpu_hardware
from workbench.records import Candidate, Status

LINUX = sys.platform.startswith("linux")
pytestmark = pytest.mark.skipif(not LINUX, reason="the template forks with Linux process controls")

# What the worker process is and may reach, printed to its log; the candidate then exits, so the
# log comes back with its crash. Run through exec() of a base64 text (the static source check
# would stop a plain one first: this is about the processes, not the check).
_FACTS = r'''
import json, os, resource, socket, ctypes
def facts():
    st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
    out = {k: st[k].strip() for k in ("Uid", "Gid", "CapInh", "CapPrm", "CapEff", "CapAmb", "NoNewPrivs", "Threads")}
    out["fds"] = sorted(int(x) for x in os.listdir("/proc/self/fd"))
    out["env"] = sorted(os.environ)
    out["sid_is_parent"] = os.getsid(0) == os.getppid()
    out["ifaces"] = sorted(n for _, n in socket.if_nameindex())
    out["rlimits"] = [resource.getrlimit(r) for r in (resource.RLIMIT_CPU, resource.RLIMIT_FSIZE, resource.RLIMIT_CORE)]
    out["dumpable"] = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)
    try:
        open("/tmp/wb_template_probe_%d" % os.getpid(), "w").close(); out["write_tmp"] = "ok"
    except OSError as e:
        out["write_tmp"] = type(e).__name__
    pp = os.getppid()
    gp = int(open(f"/proc/{pp}/stat").read().rsplit(")", 1)[1].split()[1])
    for name, pid in (("parent", pp), ("grandparent", gp)):
        for what in ("environ", "mem"):
            try:
                open(f"/proc/{pid}/{what}", "rb").read(1); out[f"{name}_{what}"] = "ok"
            except OSError as e:
                out[f"{name}_{what}"] = type(e).__name__
        try:
            os.kill(pid, 0); out[f"{name}_signal"] = "ok"
        except OSError as e:
            out[f"{name}_signal"] = type(e).__name__
    out["grandparent_pid"] = gp
    return out
print("FACTS" + json.dumps(facts()), flush=True)
os._exit(7)
'''
_WRAP = ("import builtins\n_b = builtins\ngetattr(_b, 'ex' + 'ec')(getattr(_b, '__imp' + 'ort__')('base' + '64')"
         ".b64decode({!r}).decode())\n")
_PROBLEM = {f.name: f for f in load_fixtures("honest")}["softmax_manual_torch"].problem


def _facts(monkeypatch, forked: bool, tag: str) -> dict:
    monkeypatch.setenv(template.ENV, "1" if forked else "0")
    src = _WRAP.format(base64.b64encode(_FACTS.encode()).decode()) + f"# {tag}\n"
    cand = Candidate.from_source(_PROBLEM.id, src, origin="test:facts")
    with ChunkedExecutor(cpu_hardware(), device="cpu", workers=1, max_chunk=2, timeout_s=120, run_timeout_s=30,
                         options={"seeds": [0], **CPU_OPTIONS}) as ex:
        m = ex.submit(_PROBLEM, [cand])[0].result(timeout=300)
    assert m.status is Status.CRASHED and "code 7" in m.reason, (m.status, m.reason, m.log[-1500:])
    line = next(ln for ln in m.log.splitlines() if ln.startswith("FACTS"))
    return json.loads(line[len("FACTS"):])


def _template_pids() -> set[int]:
    return {t.proc.pid for t in template.POOL._templates.values()}


def test_a_forked_worker_is_contained_as_an_exec_d_one_is(monkeypatch):
    forked = _facts(monkeypatch, True, "forked")
    assert forked.pop("grandparent_pid") in _template_pids()   # the supervisor's parent is the template
    execd = _facts(monkeypatch, False, "exec")
    assert execd.pop("grandparent_pid") not in _template_pids()
    assert forked == execd
    # And what both are, on this machine:
    assert forked["CapEff"] == forked["CapPrm"] == forked["CapInh"] == forked["CapAmb"] == "0" * 16
    assert forked["Threads"] == "1" and forked["dumpable"] == 1 and forked["sid_is_parent"]
    assert set(forked["env"]) <= set(contain._ENV_KEEP) | {"HOME", "TMPDIR", "PYTHONDONTWRITEBYTECODE",
                                                            "PYTHONNOUSERSITE"}
    assert max(forked["fds"]) <= 5   # stdio, channel, link (and the listing's own)
    assert forked["rlimits"][0][0] == contain.CPU_SECONDS and forked["rlimits"][2] == [0, 0]
    if contain.landlock_abi() >= 1:
        assert forked["write_tmp"] == "PermissionError" and forked["NoNewPrivs"] == "1"
    if os.geteuid() == 0:
        assert forked["ifaces"] == ["lo"]
    for who in ("parent", "grandparent"):
        assert forked[f"{who}_environ"] == forked[f"{who}_mem"] == "PermissionError"


@pytest.mark.skipif(not LINUX or os.geteuid() != 0, reason="switching the worker's user needs root")
def test_a_forked_worker_switches_to_the_workers_user(monkeypatch):
    import pwd

    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    # The modules are imported in the template, so the fork runs as nobody even where the
    # Python install is not readable by others (where an exec'd worker could not start).
    monkeypatch.setattr(contain, "_identity", (nobody.pw_uid, nobody.pw_gid))
    got = _facts(monkeypatch, True, "nobody")
    assert got["Uid"].split() == [str(nobody.pw_uid)] * 4 and got["Gid"].split() == [str(nobody.pw_gid)] * 4
    assert got["CapEff"] == got["CapPrm"] == "0" * 16
    assert got["dumpable"] == 1   # as after an exec (a change of user clears it)
    for who in ("parent", "grandparent"):
        assert got[f"{who}_environ"] == got[f"{who}_mem"] == got[f"{who}_signal"] == "PermissionError"


def _env(tmp_path) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(template.__file__))))
    # One intra-op thread, as the CPU path's workers have (with more, torch's import may leave a
    # thread in the template, which is then not used).
    return contain.minimal_env({**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{tmp_path}", "OMP_NUM_THREADS": "1",
                                "TRITON_INTERPRET": "1"}, tmp_path)


def _spawn_sleeper(t: template.Template, tmp_path):
    """A forked supervisor whose worker waits for jobs on a pipe that stays open."""
    job_r, job_w = os.pipe()
    res_r, res_w = os.pipe()
    log = open(tmp_path / "log.txt", "wb")
    spec = contain.supervisor_spec(-1, 2**30, None, None, channel_fd=res_w)
    try:
        child = t.spawn({"stdin": job_r, "stdout": log.fileno(), "channel": res_w}, spec, _env(tmp_path),
                        str(tmp_path))
    finally:
        for fd in (job_r, res_w):
            os.close(fd)
        log.close()
    return child, job_w, res_r


def test_the_template_reports_exits_and_its_supervisors_end_with_it(tmp_path):
    t = template.Template(_env(tmp_path))
    try:
        assert t.threads == 1
        child, job_w, res_r = _spawn_sleeper(t, tmp_path)
        assert child.poll() is None
        os.close(job_w)                      # no job: the worker says bye and leaves
        assert child.wait(timeout=60) == 0 and child.poll() == 0
        child, job_w, res_r2 = _spawn_sleeper(t, tmp_path)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
        child, job_w2, res_r3 = _spawn_sleeper(t, tmp_path)
        assert child.poll() is None
    finally:
        t.close()                            # the socket closes: the template ends, and its supervisors
    assert t.proc.returncode is not None
    assert child.wait(timeout=10) == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child.pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child.pid}") or \
        open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
    for fd in (job_w2, res_r, res_r2, res_r3):
        os.close(fd)


def test_a_template_with_a_second_thread_is_not_used(tmp_path):
    # A module that starts a thread when imported (as torch's import does with more than one
    # intra-op thread on some machines): a fork would copy whatever lock that thread holds.
    (tmp_path / "wb_starts_a_thread.py").write_text(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n")
    env = _env(tmp_path)
    t = template.Template(env, preload=("wb_starts_a_thread",))
    try:
        assert t.threads == 2
        job_r, job_w = os.pipe()
        with pytest.raises(template.TemplateError, match="2 threads"):
            t.spawn({"stdin": job_r, "stdout": job_w}, contain.supervisor_spec(-1, 2**30, None, None), env,
                    str(tmp_path))
        os.close(job_r)
        os.close(job_w)
    finally:
        t.close()
    # The pool does not use such a template, says why, and does not start it again.
    pool = template.TemplatePool(preload=template.PRELOAD + ("wb_starts_a_thread",))
    assert pool.get(env) is None and "2 threads" in pool.why_not(env)
    assert pool.get(env) is None and not pool._templates
    pool.close()


def test_a_template_that_cannot_import_is_reported(tmp_path):
    with pytest.raises(template.TemplateError, match="no_such_module_here"):
        template.Template(_env(tmp_path), preload=("no_such_module_here",))
    pool = template.TemplatePool(preload=("no_such_module_here",))
    assert pool.get(_env(tmp_path)) is None and "no_such_module_here" in pool.why_not(_env(tmp_path))


def test_where_templates_are_used(monkeypatch):
    monkeypatch.delenv(template.ENV, raising=False)
    assert template.enabled("cpu") and not template.enabled("cuda")
    monkeypatch.setenv(template.ENV, "1")
    assert template.enabled("cuda")
    monkeypatch.setenv(template.ENV, "0")
    assert not template.enabled("cpu")
