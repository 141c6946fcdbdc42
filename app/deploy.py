"""Past one machine: N app processes behind nginx with sticky sessions, sharing what must be shared through Redis.

    python -m app.deploy --replicas 2 --port 8080                  # redis-server, 2 app processes and nginx, here
    python -m app.deploy --replicas 3 --redis-url redis://db:6379/0 --port 8080
    python -m app.deploy --print-site --app-ports 8601 8602 --port 80 > /etc/nginx/conf.d/bve.conf  # your own nginx

What is shared, and how: a Streamlit session lives in one process (its websocket, its widgets, its media files), so
every request of one browser goes to the same process — *affinity*: by default a cookie (``bve_route``) that nginx
sets on the first request and hashes (``hash ... consistent``), so a hall of students behind one NAT address still
spreads over the processes; ``--affinity ip`` uses ``ip_hash`` instead. What several processes must agree on lives
in Redis (``BVE_REDIS_URL``, given to every process): the class rooms (:mod:`app.classroom.rooms`), the one
download at a time (:mod:`app.models.own`) and the one live run (:mod:`app.experiments.live`), both through
:mod:`app.core.locks`. The processes share one cookie secret (``STREAMLIT_SERVER_COOKIE_SECRET``), so what one
signed another accepts. A session's state beyond its URL (``st.session_state``) stays in its process: when a
process dies, nginx sends its sessions' reconnecting websockets to another process, where the page reruns from the
URL (every page's state is in its URL) — a live run's curve in progress does not move with it.

The template is ``deploy/nginx-site.conf`` (nginx's http block); :func:`site_config` fills it in and
:func:`nginx_config` wraps it in a whole nginx.conf that runs without root's directories. :class:`Deployment` starts,
watches (restarting a process that died) and stops it all; the replica test (tests/e2e/test_replicas.py) and the
benchmark's ``class-replicas`` rows use it as the command line does. Without ``BVE_REDIS_URL`` — ``python -m
app.serve`` alone, the default — nothing here is used and nothing needs installing.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "deploy" / "nginx-site.conf"
AFFINITIES = ("cookie", "ip")
ROUTE_COOKIE = "bve_route"
SERVED_BY = "X-BVE-Upstream"  # --served-by: which process answered (a debugging aid; the replica test reads it)

_COOKIE_MAPS = f"""
# affinity by cookie: a browser's first request gets {ROUTE_COOKIE}=<a random id>, whose hash picks its process
map $cookie_{ROUTE_COOKIE} $bve_route {{
    ""      $request_id;
    default $cookie_{ROUTE_COOKIE};
}}
map $cookie_{ROUTE_COOKIE} $bve_set_route {{
    ""      "{ROUTE_COOKIE}=$request_id; Path=/; HttpOnly; SameSite=Lax";
    default "";
}}
"""


def site_config(
    ports: list[int],
    listen: str = "8080",
    app_host: str = "127.0.0.1",
    affinity: str = "cookie",
    served_by: bool = False,
) -> str:
    """nginx's http-block configuration for app processes on ``app_host``:``ports``, listening on ``listen`` (a port,
    or address:port). ``affinity``: "cookie" (the default) or "ip" (``ip_hash``)."""
    if affinity not in AFFINITIES:
        raise ValueError(f"affinity must be one of {AFFINITIES}")
    if not ports:
        raise ValueError("at least one app process")
    cookie = affinity == "cookie"
    headers = (
        ["        add_header Set-Cookie $bve_set_route always;  # the affinity cookie, on a first request"]
        if cookie
        else []
    )
    if served_by:
        headers.append(f"        add_header {SERVED_BY} $upstream_addr always;  # --served-by")
    return string.Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        affinity_comment=(
            "Here by a cookie nginx sets (bve_route), hashed:\n# students behind one address (a "
            "hall's NAT) still spread over the processes."
            if cookie
            else "Here by the client's address (ip_hash):\n# every browser behind one address (a hall's "
            "NAT) goes to the same process."
        ),
        affinity_maps=_COOKIE_MAPS if cookie else "",
        balance="    hash $bve_route consistent;" if cookie else "    ip_hash;",
        servers="\n".join(f"    server {app_host}:{p} max_fails=1 fail_timeout=10s;" for p in ports),
        listen=listen,
        headers="\n".join(headers),
    )


def nginx_config(site: str, prefix: Path, user: str | None = None) -> str:
    """A whole nginx.conf around ``site`` whose pid, logs and temporary files live under ``prefix`` (no root needed;
    ``user``: the workers' user when nginx starts as root)."""
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    indented = "\n".join(("    " + line) if line else "" for line in site.splitlines())
    return (
        f"# written by python -m app.deploy\n{f'user {user};' if user else ''}\nworker_processes auto;\n"
        f"pid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} warn;\n"
        "events {\n    worker_connections 4096;  # two per session (browser and app process)\n}\n"
        f"http {{\n    access_log off;\n{temp}\n{indented}\n}}\n"
    )


def binary(name: str) -> str | None:
    """``name``'s executable (Debian puts nginx in /usr/sbin, outside a user's PATH)."""
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.exists(p)), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


class Deployment:
    """redis-server (unless ``redis_url`` names one), ``replicas`` app processes (``python -m app.serve`` on
    127.0.0.1, ports ``app_ports`` or free ones) and nginx on ``host``:``port``. Use as a context manager, or
    :meth:`start` / :meth:`stop`; :meth:`watch` restarts an app process that died (when ``restart``)."""

    def __init__(
        self,
        replicas: int = 2,
        port: int = 8080,
        host: str = "0.0.0.0",
        app_ports: list[int] | None = None,
        redis_url: str | None = None,
        affinity: str = "cookie",
        workdir: Path | None = None,
        restart: bool = True,
        served_by: bool = False,
        serve_args: tuple[str, ...] = (),
        env: dict | None = None,
    ):
        if replicas < 1:
            raise ValueError("at least one app process")
        self.replicas, self.port, self.host, self.affinity = replicas, port, host, affinity
        self.app_ports = list(app_ports or [])
        self.redis_url, self.restart, self.served_by, self.serve_args = redis_url, restart, served_by, serve_args
        self.env = dict(env or {})
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else None
        self.apps: list[subprocess.Popen | None] = []
        self.nginx = self.redis = None
        self.restarts = 0
        self._started_at: list[float] = []

    # ------------------------------------------------------------------ start
    @property
    def url(self) -> str:
        return f"http://{'127.0.0.1' if self.host in ('0.0.0.0', '::', '') else self.host}:{self.port}"

    def app_url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.app_ports[i]}"

    def start(self, timeout: float = 180.0) -> Deployment:
        nginx = binary("nginx")
        if nginx is None:
            raise RuntimeError("nginx is not installed (Debian: apt-get install -y nginx-light)")
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="bve-deploy-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            if self.redis_url is None:
                self.redis_url = self._start_redis()
            self.app_ports = self.app_ports or [free_port() for _ in range(self.replicas)]
            if len(self.app_ports) != self.replicas:
                raise ValueError("one app port per app process")
            secret = os.environ.get("STREAMLIT_SERVER_COOKIE_SECRET") or secrets.token_hex(32)
            self.env = {"BVE_REDIS_URL": self.redis_url, "STREAMLIT_SERVER_COOKIE_SECRET": secret, **self.env}
            self.apps = [self._start_app(i) for i in range(self.replicas)]
            self._started_at = [time.monotonic()] * self.replicas
            end = time.monotonic() + timeout
            for i in range(self.replicas):
                self._wait(
                    lambda i=i: healthy(self.app_url(i) + "/_stcore/health"),
                    end,
                    f"app process {i + 1}",
                    self.apps[i],
                    self.workdir / f"app-{i + 1}.log",
                )
            self.nginx = self._start_nginx(nginx)
            self._wait(
                lambda: healthy(self.url + "/_stcore/health"),
                end,
                "nginx",
                self.nginx,
                self.workdir / "nginx" / "error.log",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _wait(self, ok, end: float, what: str, proc, log: Path) -> None:
        """Until ``ok()``; a process that exits or a deadline passed raises, with the end of its log (a temporary
        folder is gone by the time the caller reads the message)."""
        while not ok():
            failed = (
                f"{what} exited with {proc.returncode}"
                if proc is not None and proc.poll() is not None
                else f"{what} did not become healthy"
                if time.monotonic() > end
                else None
            )
            if failed:
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise (RuntimeError if "exited" in failed else TimeoutError)(f"{failed}; the end of {log}:\n{tail}")
            time.sleep(0.2)

    def _start_redis(self) -> str:
        path = binary("redis-server")
        if path is None:
            raise RuntimeError(
                "redis-server is not installed (Debian: apt-get install -y redis-server), or give --redis-url"
            )
        port = free_port()
        self.redis = subprocess.Popen(
            [
                path,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.workdir),
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
                "--daemonize",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        end = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return f"redis://127.0.0.1:{port}/0"
            except OSError:
                pass
            if self.redis.poll() is not None or time.monotonic() > end:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def _start_app(self, i: int) -> subprocess.Popen:
        cmd = [
            sys.executable,
            "-m",
            "app.serve",
            "--server.headless=true",
            "--server.address=127.0.0.1",
            f"--server.port={self.app_ports[i]}",
            "--browser.gatherUsageStats=false",
            *self.serve_args,
        ]
        log = open(self.workdir / f"app-{i + 1}.log", "a")
        try:
            return subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **self.env}, stdout=log, stderr=subprocess.STDOUT)
        finally:
            log.close()

    def _start_nginx(self, nginx: str) -> subprocess.Popen:
        prefix = self.workdir / "nginx"
        prefix.mkdir(exist_ok=True)
        user = None
        if os.geteuid() == 0:  # nginx as root runs its workers as nobody: they must reach the temporary folders
            import grp
            import pwd

            nobody = pwd.getpwnam("nobody")
            user = f"nobody {grp.getgrgid(nobody.pw_gid).gr_name}"
            for folder in (self.workdir, prefix):
                folder.chmod(0o755)
        site = site_config(
            self.app_ports, listen=f"{self.host}:{self.port}", affinity=self.affinity, served_by=self.served_by
        )
        conf = prefix / "nginx.conf"
        conf.write_text(nginx_config(site, prefix, user))
        test = subprocess.run(
            [nginx, "-t", "-q", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
            capture_output=True,
            text=True,
        )
        if test.returncode != 0:
            raise RuntimeError(f"nginx refused the configuration {conf}: {test.stderr.strip()}")
        return subprocess.Popen(
            [nginx, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log"), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    # ------------------------------------------------------------------ run
    def kill(self, i: int, sig: int = signal.SIGKILL) -> int:
        """Kill app process ``i`` (a crash: SIGKILL by default); its pid."""
        proc = self.apps[i]
        proc.send_signal(sig)
        proc.wait(30)
        return proc.pid

    def watch(self) -> list[str]:
        """One look: restart each app process that died (when ``restart``; at most once per 10 s each). Returns what
        it saw, as sentences; raises RuntimeError when nginx or this deployment's redis-server died."""
        for what, proc in (("nginx", self.nginx), ("redis-server", self.redis)):
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"{what} exited with {proc.returncode}")
        said = []
        for i, proc in enumerate(self.apps):
            if proc is None or proc.poll() is None:
                continue
            if not self.restart:
                said.append(f"app process {i + 1} (port {self.app_ports[i]}) exited with {proc.returncode}")
                self.apps[i] = None
            elif time.monotonic() - self._started_at[i] > 10:
                said.append(
                    f"app process {i + 1} (port {self.app_ports[i]}) exited with {proc.returncode}; "
                    "restarted (its sessions reconnect to the others meanwhile)"
                )
                self.apps[i] = self._start_app(i)
                self._started_at[i] = time.monotonic()
                self.restarts += 1
        return said

    def stop(self) -> None:
        """Stop nginx, every app process and this deployment's redis-server; remove its temporary folder."""
        for proc in [self.nginx, *self.apps, self.redis]:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in [self.nginx, *self.apps, self.redis]:
            if proc is not None:
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        if self._own_workdir and self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Deployment:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.deploy", description=__doc__.split("\n\n")[0])
    p.add_argument("--replicas", type=int, default=2, help="app processes (default 2)")
    p.add_argument("--port", type=int, default=8080, help="nginx's port, the one visitors use (default 8080)")
    p.add_argument("--host", default="0.0.0.0", help="nginx's address (default 0.0.0.0: every interface)")
    p.add_argument(
        "--app-ports", type=int, nargs="+", help="the app processes' ports on 127.0.0.1 (default: free ones)"
    )
    p.add_argument("--redis-url", help="a Redis of your own (default: start redis-server here, on a loopback port)")
    p.add_argument(
        "--affinity",
        choices=AFFINITIES,
        default="cookie",
        help="sticky sessions by a cookie nginx sets (default) or by the client's address (ip_hash)",
    )
    p.add_argument("--dir", type=Path, help="where logs and nginx's files go (default: a temporary folder)")
    p.add_argument("--no-restart", action="store_true", help="leave an app process that died down")
    p.add_argument("--served-by", action="store_true", help=f"answer with {SERVED_BY}: which app process served")
    p.add_argument(
        "--print-site",
        action="store_true",
        help="print nginx's configuration for --app-ports (for your own nginx) and exit",
    )
    args = p.parse_args(argv)
    if args.print_site:
        if not args.app_ports:
            p.error("--print-site needs --app-ports")
        print(site_config(args.app_ports, listen=str(args.port), affinity=args.affinity, served_by=args.served_by))
        return 0
    if args.app_ports and len(args.app_ports) != args.replicas:
        p.error("give one --app-ports entry per replica")

    def leave(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, leave)
    deployment = Deployment(
        args.replicas,
        args.port,
        args.host,
        args.app_ports,
        args.redis_url,
        args.affinity,
        args.dir,
        restart=not args.no_restart,
        served_by=args.served_by,
    )
    try:
        deployment.start()
        print(
            f"Serving on {deployment.url} (nginx, {args.affinity} affinity) over {args.replicas} app processes on "
            f"ports {', '.join(map(str, deployment.app_ports))}; Redis {deployment.redis_url}; logs in "
            f"{deployment.workdir}. Ctrl-C stops everything.",
            flush=True,
        )
        while True:
            time.sleep(1.0)
            for line in deployment.watch():
                print(line, flush=True)
    except KeyboardInterrupt:
        return 0
    except RuntimeError as e:
        print(f"app.deploy: {e}", file=sys.stderr)
        return 1
    finally:
        deployment.stop()


if __name__ == "__main__":
    sys.exit(main())
