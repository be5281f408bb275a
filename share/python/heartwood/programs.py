"""Finding and running the suite's programs, as hw(1) does from C.

Nothing here reads or writes the store: every view and every change goes
through a program, and its exit status becomes an exception (errors.py).
"""

import json
import os
import signal
import subprocess

from .errors import HeartwoodError, UnavailableError, error_for

_HERE = os.path.dirname(os.path.abspath(__file__))


def _is_exec(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def program_dirs():
    """Where the programs are looked for, in order: HW_BINDIR when set; the
    build tree that holds this package (share/python/heartwood is three
    levels below the programs); PREFIX/bin of an installed copy
    (PREFIX/share/heartwood/python/heartwood); then PATH."""
    dirs = []
    if os.environ.get("HW_BINDIR"):
        dirs.append(os.environ["HW_BINDIR"])
    up3 = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))
    dirs.append(up3)
    dirs.append(os.path.normpath(os.path.join(up3, "..", "bin")))
    path = os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin"
    dirs.extend(d or "." for d in path.split(os.pathsep))
    return dirs


def find_program(name):
    """The path of program name, or None when it is nowhere."""
    for d in program_dirs():
        p = os.path.join(d, name)
        if _is_exec(p):
            return p
    return None


def last_line(text):
    """The last non-empty line of a program's standard error."""
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else ""


class Programs:
    """Runs the suite's programs in one project directory.

    A program runs in its own process group, so that an interrupt of the
    kernel (SIGINT to the kernel's group) never stops a command half way:
    when the kernel is interrupted while a program runs, the program is
    left to finish, and the interrupt is raised once it has.
    """

    def __init__(self, project):
        self.project = project

    def path(self, name):
        p = find_program(name)
        if p is None:
            raise UnavailableError(
                "heartwood: cannot find program '%s'" % name, 69, name)
        return p

    def run(self, name, args, stdin=None, ok=(0,)):
        """Run program name with args; return (status, stdout, stderr) as
        text.  A status outside ok raises the error its code maps to, with
        the program's last line on standard error as the message."""
        argv = [self.path(name)] + list(args)
        data = stdin.encode("utf-8") if stdin is not None else None
        # An interrupt (the kernel's SIGINT) lets a started program finish,
        # then raises.  On the main thread it is only noted while the
        # program runs, so it cannot land between the start and the wait;
        # elsewhere it is caught around the wait.
        noted = []
        try:
            old = signal.signal(signal.SIGINT,
                                lambda sig, frame: noted.append(sig))
            mine = True
        except ValueError:
            mine = False  # not the main thread
        try:
            if noted:
                raise KeyboardInterrupt
            try:
                proc = subprocess.Popen(
                    argv, cwd=self.project,
                    stdin=subprocess.PIPE if stdin is not None
                    else subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    start_new_session=True)
            except OSError as e:
                raise UnavailableError("heartwood: cannot run '%s': %s"
                                       % (argv[0], e.strerror), 69, name)
            interrupted = None
            while True:
                try:
                    out, err = proc.communicate(data)
                    break
                except KeyboardInterrupt as e:
                    interrupted = e  # let it finish, then raise
                    data = None
        finally:
            if mine:  # None: a handler not set from Python, not kept
                signal.signal(signal.SIGINT,
                              old if old is not None
                              else signal.default_int_handler)
        if interrupted is not None or noted:
            raise interrupted or KeyboardInterrupt()
        out = out.decode("utf-8", "replace")
        err = err.decode("utf-8", "replace")
        rc = proc.returncode
        if rc < 0:
            rc = 128 - rc
        if rc not in ok:
            msg = last_line(err) or "%s: exited with status %d" % (name, rc)
            raise error_for(rc, msg, name)
        return rc, out, err

    def json(self, name, args, stdin=None, ok=(0,)):
        """Run a program that prints one JSON object; return it parsed."""
        rc, out, err = self.run(name, args, stdin, ok)
        try:
            return json.loads(out)
        except ValueError:
            raise HeartwoodError("heartwood: cannot read the output of "
                                 "'%s %s': not JSON" % (name, " ".join(args)),
                                 rc, name)
