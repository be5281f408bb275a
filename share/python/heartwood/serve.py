"""browser_url: find or start hw-serve for the project.

Under Jupyter the browser reaches the kernel's machine only through the
notebook server's proxy (jupyter-server-proxy: PREFIX/proxy/PORT/), so
hw-serve is started in its jupyter-proxy ingress mode, bound to loopback,
with the external origin and the proxy's base path; elsewhere it binds
loopback directly.  The ingress policy itself is hw-serve's (hw-serve(1)).
"""

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request

from .errors import HeartwoodError, UnavailableError
from .programs import find_program

START_WAIT_S = 10


def jupyter_route(port, origin=None, env=None):
    """(origin, base path) of the Jupyter server proxy route to port, or
    None when the kernel does not run under a Jupyter server.  The origin
    is the origin argument, else HW_PUBLIC_ORIGIN, else the scheme and
    authority of JUPYTER_SERVER_URL (or JUPYTERHUB's public URL); the base
    path is JUPYTERHUB_SERVICE_PREFIX (or JUPYTER_BASE_URL, or /) followed
    by proxy/PORT."""
    env = os.environ if env is None else env
    under = any(env.get(k) for k in ("JPY_PARENT_PID", "JUPYTER_SERVER_URL",
                                      "JUPYTERHUB_SERVICE_PREFIX",
                                      "JUPYTER_SERVER_ROOT"))
    if not under:
        return None
    if not origin:
        origin = env.get("HW_PUBLIC_ORIGIN")
    if not origin:
        for k in ("JUPYTER_SERVER_URL", "JUPYTERHUB_PUBLIC_URL"):
            u = env.get(k)
            if u and "://" in u:
                scheme, rest = u.split("://", 1)
                origin = "%s://%s" % (scheme, rest.split("/", 1)[0])
                break
    if not origin:
        return None
    prefix = env.get("JUPYTERHUB_SERVICE_PREFIX") or \
        env.get("JUPYTER_BASE_URL") or "/"
    if not prefix.endswith("/"):
        prefix += "/"
    return origin.rstrip("/"), "%sproxy/%d" % (prefix, port)


def _probe(port, project):
    """The URL of an hw-serve already serving project on loopback port,
    else None: it answers GET /project/readiness with this project's
    root."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/project/readiness"
                                    % port, timeout=2) as r:
            rep = json.loads(r.read().decode("utf-8"))
    except (OSError, ValueError, urllib.error.URLError):
        return None
    if isinstance(rep, dict) and rep.get("project_root") == project:
        return True
    return None


def browser_url(progs, port=8767, origin=None, logdir=None):
    """(url, process we started or None); url None when there is no
    browser route (under Jupyter without a known external origin).  The
    standard error of an hw-serve we start goes to logdir/hw-serve.log."""
    if not isinstance(port, int) or not 1 <= port <= 65535:
        from .errors import UsageError
        raise UsageError("heartwood: invalid port %r" % (port,), 2)
    route = jupyter_route(port, origin)
    under = any(os.environ.get(k) for k in (
        "JPY_PARENT_PID", "JUPYTER_SERVER_URL", "JUPYTERHUB_SERVICE_PREFIX",
        "JUPYTER_SERVER_ROOT"))
    if under and route is None:
        return None, None
    if route:
        url = "%s%s/" % route
    else:
        url = "http://127.0.0.1:%d/" % port
    if _probe(port, progs.project):
        return url, None
    path = find_program("hw-serve")
    if path is None:
        raise UnavailableError("heartwood: cannot find program 'hw-serve': "
                               "the browser interface is not installed", 69,
                               "hw-serve")
    argv = [path, "--host", "127.0.0.1", "--port", str(port)]
    if route:
        argv += ["--ingress", "jupyter-proxy", "--origin", route[0],
                 "--base-path", route[1], "--proxy-strips-prefix"]
    log = os.path.join(logdir or progs.project, "hw-serve.log")
    with open(log, "wb") as errf:
        proc = subprocess.Popen(argv, cwd=progs.project,
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=errf,
                                start_new_session=True)
    line = proc.stdout.readline()
    try:
        ann = json.loads(line.decode("utf-8"))
        if not isinstance(ann, dict) or "url" not in ann:
            raise ValueError
    except ValueError:
        proc.wait(START_WAIT_S)
        with open(log, errors="replace") as f:
            err = f.read().strip()
        raise HeartwoodError(err.splitlines()[-1] if err else
                             "hw-serve: did not announce its URL",
                             proc.returncode, "hw-serve")
    return (url if route else ann["url"]), proc


def stop_serve(proc):
    """Stop an hw-serve we started: SIGTERM, then wait for it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(START_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout:
        proc.stdout.close()
