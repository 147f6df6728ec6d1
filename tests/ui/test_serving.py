"""Who may reach the app: served beyond loopback with no login it shows only a refusal, unless
the user opted in; the launcher refuses before starting; the served page names no outside URL."""
from __future__ import annotations

import re
import urllib.request
from urllib.parse import urlparse

import panel as pn
import pytest
from hostile_fixtures import hostile_store  # noqa: F401 (fixture)

from workbench.ui import serving
from workbench.ui.serving import Listener, exposure_refusal, is_loopback, launch_refusal, listeners


@pytest.fixture(autouse=True)
def _no_opt_in(monkeypatch):
    monkeypatch.delenv(serving.ALLOW_REMOTE_ENV, raising=False)
    monkeypatch.delenv(serving.AUTH_ENV, raising=False)


@pytest.mark.parametrize("address,loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("", False), (None, False), ("192.0.2.7", False),
    ("10.1.2.3", False)])
def test_loopback_addresses(address, loopback):
    assert is_loopback(address) is loopback


def test_refusal_needs_remote_without_login_and_without_opt_in(monkeypatch):
    assert exposure_refusal([]) == ""  # not served (a notebook, a test)
    assert exposure_refusal([Listener(("127.0.0.1",), False), Listener(("::1",), False)]) == ""
    assert exposure_refusal([Listener(("0.0.0.0",), True)]) == ""  # a login guards it
    why = exposure_refusal([Listener(("0.0.0.0", "::"), False)])
    assert "0.0.0.0" in why and "WORKBENCH_ALLOW_REMOTE=1" in why and "--basic-auth" in why
    monkeypatch.setenv(serving.ALLOW_REMOTE_ENV, "1")
    assert exposure_refusal([Listener(("0.0.0.0",), False)]) == ""
    monkeypatch.setenv(serving.AUTH_ENV, "1")  # asked for a login that the server does not have
    assert "no login" in exposure_refusal([Listener(("127.0.0.1",), False)])
    assert exposure_refusal([Listener(("127.0.0.1",), True)]) == ""


def test_launcher_refuses_before_starting_panel(capsys, monkeypatch):
    monkeypatch.setattr(serving.os, "execve", lambda *a: pytest.fail("panel serve was started"))
    assert serving.main(["--address", "0.0.0.0", "--port", "5099"]) == 2
    assert "--allow-remote" in capsys.readouterr().err
    assert launch_refusal("127.0.0.1", False, []) == ""
    assert launch_refusal("0.0.0.0", True, []) == ""
    assert launch_refusal("0.0.0.0", False, ["--basic-auth=users.json", "--cookie-secret", "s"]) == ""
    assert launch_refusal("0.0.0.0", False, ["--cookie-secret", "s"]) != ""


def test_launcher_starts_panel_on_loopback(monkeypatch):
    calls = []
    monkeypatch.setattr(serving.os, "execve", lambda path, argv, env: calls.append((argv, env)))
    serving.main(["--port", "5099", "--", "--num-procs", "1"])
    (argv, env), = calls
    assert argv[1:3] == ["serve", str(serving.__file__).replace("ui/serving.py", "app.py")]
    assert argv[argv.index("--address") + 1] == "127.0.0.1" and argv[-2:] == ["--num-procs", "1"]
    assert serving.ALLOW_REMOTE_ENV not in env and "--allow-websocket-origin=127.0.0.1:5099" in argv
    serving.main(["--address", "0.0.0.0", "--allow-remote", "--", "--allow-websocket-origin=gpu-box:5006"])
    argv, env = calls[-1]
    assert [a for a in argv if "websocket-origin" in a] == ["--allow-websocket-origin=gpu-box:5006"]
    assert env[serving.ALLOW_REMOTE_ENV] == "1"  # the app then shows itself on every interface


def _get(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as r:
        return r.read().decode()


@pytest.fixture
def serve(hostile_store):
    """serve(address, **pn.serve options) -> port of the app (workbench.app.build) over the store."""
    from panel.tests.util import serve_and_wait

    from workbench import app

    pn.state.cache.clear()
    try:
        yield lambda address, **kw: serve_and_wait(lambda: app.build(hostile_store), address=address, **kw)
    finally:
        pn.state.kill_all_servers()
        pn.state.cache.clear()


def test_app_on_every_interface_shows_only_the_refusal(serve, hostile_store, monkeypatch, capfd):
    from workbench import app

    port = serve("0.0.0.0")
    assert any(x.remote and not x.auth for x in listeners())
    _get(port)  # the server builds the session's page (its content then goes over the websocket)
    assert "refusing to show the app" in capfd.readouterr().err
    tmpl = app.build(hostile_store)
    (only,) = tmpl.main
    assert "Not served" in only.object and "WORKBENCH_ALLOW_REMOTE=1" in only.object
    monkeypatch.setenv(serving.ALLOW_REMOTE_ENV, "1")
    assert "REPLAY MODE" in app.build(hostile_store).main[0].object


def test_login_counts_as_guarded(serve):
    serve("0.0.0.0", basic_auth="a long test password", cookie_secret="test-secret")
    found = listeners()
    assert found and all(x.auth for x in found) and exposure_refusal() == ""


def test_page_on_loopback_names_no_outside_url(serve):
    port = serve("127.0.0.1")
    assert [x.addresses for x in listeners()] == [("127.0.0.1",)]
    page = _get(port)
    assert "<title>GPU Forecasters Workbench</title>" in page
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url\(\s*["']?([^"')]+)""", page)
    hosts = {urlparse(u if "//" in u else "").hostname for pair in urls for u in pair if u}
    assert urls and hosts <= {None, "127.0.0.1", "localhost"}, hosts
    assert "fonts.googleapis.com" not in page
