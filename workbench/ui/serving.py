"""Who can reach the app, and what the page may load.

The app has no login of its own and shows (and runs) code that models wrote, so by default it is
served to this machine only. `exposure_refusal()` reads the addresses that the Bokeh servers of
this process are really bound to (their listening sockets, the same ones Bokeh reports) and the
auth provider they were started with; the app shows nothing but the refusal when one listens
beyond loopback with no login, unless the user opted in with WORKBENCH_ALLOW_REMOTE=1. `main()`
is the launcher behind `make run` (`python -m workbench.ui.serving`): it refuses before starting
`panel serve` at all.

Binding to no address (`panel serve` without `--address`, `pn.serve` without `address=`) listens
on every interface, so it counts as remote. A server bound to a Unix socket only counts as local.

`OfflineFast` is Panel's Fast design without its Google-font stylesheet: with it, the page loads
every script, style and font from the app's own server (Panel's bundled resources), so opening the
app sends no request off the machine.
"""
from __future__ import annotations

import argparse
import gc
import ipaddress
import os
import shlex
import socket
import sys
import weakref
from dataclasses import dataclass
from typing import Sequence

from panel.theme.fast import Fast

ALLOW_REMOTE_ENV = "WORKBENCH_ALLOW_REMOTE"
AUTH_ENV = "WORKBENCH_AUTH"
AUTH_FLAGS = ("--basic-auth", "--oauth-provider")

_found_servers: "weakref.WeakSet" = weakref.WeakSet()


class OfflineFast(Fast):
    """Panel's Fast design with no web font fetched from outside (the page falls back to the
    browser's sans-serif)."""

    _resources = {**Fast._resources, "font": {}}


# Panel finds a design's bundled files (js/fast_design.js) under its lowercased class name.
OfflineFast.__name__ = Fast.__name__


def allow_remote() -> bool:
    """True when the user opted in to serving beyond loopback without a login."""
    return os.environ.get(ALLOW_REMOTE_ENV, "").strip().lower() in ("1", "true", "yes")


def is_loopback(address: str | None) -> bool:
    """True when `address` (an IP or host name) reaches this machine only; None or "" (every
    interface) and names that resolve to any non-loopback address are not loopback."""
    if not address:
        return False
    host = address.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0].split("%", 1)[0]).is_loopback for i in infos)


@dataclass(frozen=True)
class Listener:
    """One running Bokeh server of this process: where it listens and whether it asks for a login."""

    addresses: tuple[str, ...]  # bound IP addresses ("0.0.0.0" / "::" for every interface)
    auth: bool

    @property
    def remote(self) -> bool:
        return any(not is_loopback(a) for a in self.addresses)


def _bokeh_servers() -> list:
    """Running Bokeh servers of this process: those `pn.serve` registered, else (under
    `panel serve`, which keeps its server in a local variable) found once among live objects."""
    import panel as pn
    from bokeh.server.server import BaseServer

    servers = [entry[0] for entry in pn.state._servers.values()]
    if not servers:
        if not _found_servers:
            for obj in gc.get_objects():
                if issubclass(type(obj), BaseServer):  # type(): no proxy's __class__ is touched
                    _found_servers.add(obj)
        servers = list(_found_servers)
    return [s for s in servers if not getattr(s, "_stopped", False)]


def listener(server) -> Listener:
    """Where `server` (a Bokeh server) listens, read from its bound sockets, and whether a login
    (Panel's basic auth or OAuth, any Bokeh auth provider) guards it."""
    addresses = []
    for sock in getattr(server._http, "_sockets", {}).values():
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            continue  # a Unix socket reaches this machine only
        try:
            addresses.append(str(sock.getsockname()[0]))
        except OSError:  # closed: the server is stopping
            continue
    provider = getattr(server._tornado, "auth_provider", None)
    auth = provider is not None and (provider.get_user is not None or provider.get_user_async is not None)
    return Listener(tuple(addresses), auth)


def listeners() -> list[Listener]:
    """Every running Bokeh server of this process, as a Listener (empty outside a server)."""
    return [listener(s) for s in _bokeh_servers()]


def exposure_refusal(found: Sequence[Listener] | None = None) -> str:
    """Why the app must not be shown ("" when it may): a server listening beyond loopback with
    no login and no opt-in; or WORKBENCH_AUTH set while no server asks for a login."""
    found = listeners() if found is None else list(found)
    if os.environ.get(AUTH_ENV) and not any(x.auth for x in found):
        return ("WORKBENCH_AUTH is set but the server has no login: serve the app with "
                "`panel serve workbench/app.py --basic-auth <password or users.json> --cookie-secret <secret>` "
                "(or --oauth-provider ...).")
    open_ = [a for x in found if x.remote and not x.auth for a in x.addresses if not is_loopback(a)]
    if open_ and not allow_remote():
        return (f"The app listens on {', '.join(sorted(set(open_)))} (reachable from other machines) with no "
                "login, and it shows and runs code that models wrote. Serve it on 127.0.0.1 "
                "(`make run`, or `panel serve workbench/app.py --address 127.0.0.1`), add a login "
                "(`--basic-auth ... --cookie-secret ...` or `--oauth-provider ...`), or, on a network you "
                f"trust, set {ALLOW_REMOTE_ENV}=1.")
    return ""


def launch_refusal(address: str, allow: bool, panel_args: Sequence[str]) -> str:
    """Why `main` must not start `panel serve` on `address` ("" when it may)."""
    if is_loopback(address) or allow or any(a.split("=", 1)[0] in AUTH_FLAGS for a in panel_args):
        return ""
    return (f"refusing to serve on {address or 'every interface'} with no login: the app shows and "
            "runs code that models wrote. Use --address 127.0.0.1, pass a login to panel "
            "(-- --basic-auth <password or users.json> --cookie-secret <secret>), or, on a network "
            f"you trust, add --allow-remote (or set {ALLOW_REMOTE_ENV}=1).")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m workbench.ui.serving [--address A] [--port P] [--allow-remote] [-- PANEL ARGS]`:
    check, then replace this process with `panel serve workbench/app.py`."""
    ap = argparse.ArgumentParser(prog="python -m workbench.ui.serving", description=__doc__.split("\n\n")[0])
    ap.add_argument("--address", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=5006)
    ap.add_argument("--allow-remote", action="store_true",
                    help=f"serve beyond loopback without a login (same as {ALLOW_REMOTE_ENV}=1)")
    ap.add_argument("panel_args", nargs=argparse.REMAINDER, help="after --: more `panel serve` options")
    args = ap.parse_args(argv)
    extra = [a for a in args.panel_args if a != "--"]
    allow = args.allow_remote or allow_remote()
    why = launch_refusal(args.address, allow, extra)
    if why:
        print(f"workbench: {why}", file=sys.stderr)
        return 2
    app = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "app.py")
    cmd = ["panel", "serve", app, "--address", args.address, "--port", str(args.port)]
    if args.address not in ("0.0.0.0", "::") and not any(
            a.split("=", 1)[0] == "--allow-websocket-origin" for a in extra):
        cmd.append(f"--allow-websocket-origin={args.address}:{args.port}")  # the URL a browser uses
    cmd += extra
    env = dict(os.environ, **({ALLOW_REMOTE_ENV: "1"} if allow else {}))
    print("workbench:", shlex.join(cmd), file=sys.stderr)
    panel = os.path.join(os.path.dirname(sys.executable), "panel")
    os.execve(panel if os.path.exists(panel) else sys.executable,
              [panel, *cmd[1:]] if os.path.exists(panel) else [sys.executable, "-m", "panel", *cmd[1:]], env)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
