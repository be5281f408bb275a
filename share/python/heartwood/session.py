"""NotebookSession: one session of one project, driven from a notebook.

Every operation is a program of the suite: commands go through
"hw-session command", the agent runs as "hw-agent run" (the session's one
owner while it runs), views come from "hw-session project", the audit
from hw-audit, the workspace from hw-inspect, readiness from "hw doctor",
the review mode from "hw-agent mode".  The bridge holds no lease, keeps no
copy of the session and reduces no events: what it shows is what the
programs printed.
"""

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import weakref

from .errors import (HeartwoodError, NotAppliedError, UsageError,
                     UnavailableError, error_for)
from .programs import Programs, last_line
from .render import (build_widget_spec, have_widgets, render_html,
                     render_text, render_widgets)
from .view import build_view_model

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")

MODES = {"always-confirm": "ask-every-time",
         "confirm-risky": "auto-approve-low-risk",
         "ask-every-time": "ask-every-time",
         "auto-approve-low-risk": "auto-approve-low-risk"}

POLL_S = 0.1  # how often wait() looks at the session
RESTART_S = 1.0  # how often wait() offers the agent a continue


class WaitTimeout(HeartwoodError, TimeoutError):
    """wait() reached its timeout before a stable boundary."""


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class NotebookSession:
    """One heartwood session of the project in the kernel's current
    directory (or project), session-main unless session_id names another.

    chat, approve, deny and resume return as soon as their command is
    durable, with the agent continuing in the background as its own
    process; wait() returns at the next stable boundary.  An interrupted
    or restarted kernel leaves the agent running: it finishes, and a new
    NotebookSession sees what it did.
    """

    def __init__(self, session_id="session-main", project=None):
        if not isinstance(session_id, str) or \
                not SESSION_ID.match(session_id):
            raise UsageError("heartwood: invalid session id %r" %
                             (session_id,), 2)
        project = os.path.abspath(project or os.getcwd())
        if not os.path.isdir(project):
            raise UnavailableError("heartwood: no project directory '%s'"
                                   % project, 66)
        self.session_id = session_id
        self.project = project
        self.view = None  # the view the last operation returned
        self._progs = Programs(project)
        self._tmp = None
        self._agent = None  # our agent run: (rc file, err file)
        self._agent_n = 0
        self._started = 0.0
        self._serve = None  # the hw-serve we started, if any
        self._signin = None  # a ChatGPT sign-in: (process, err file)
        self._closed = False

    # ---- life ----

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Stop what this object started (an hw-serve it started) and
        forget its files.  An agent run it started is the session's owner
        and is not stopped: it goes on to its next stable boundary, as
        after hw ask, and another NotebookSession sees what it did.  The
        bridge holds no credential: keys stay in the environment, which
        the programs read."""
        if self._signin is not None:
            self._signin_end()
        if self._serve is not None:
            from .serve import stop_serve
            stop_serve(self._serve)
            self._serve = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        self._agent = None
        self._closed = True

    def _tmpdir(self):
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="heartwood-notebook-")
            # forgotten without close(): removed when collected or at exit
            weakref.finalize(self, shutil.rmtree, self._tmp, True)
        return self._tmp

    def _open(self):
        if self._closed:
            raise UsageError("heartwood: the notebook session was closed",
                             2)

    # ---- the programs ----

    def _known(self):
        """Raise UnavailableError (66) unless the session exists; the
        default session is ready before its first command."""
        self._open()
        if self.session_id != "session-main":
            self._progs.run("hw-session", ["show", self.session_id])

    def _command(self, kind, payload):
        """Send one typed command through hw-session command and return
        the view of its answer; a command recorded as not applied raises
        NotAppliedError with the reason the projection gives."""
        cid = "%s-%s-%s" % (self.session_id, kind, secrets.token_hex(16))
        env = {"schema_version": "heartwood.session-command.v1",
               "command_id": cid, "session_id": self.session_id,
               "kind": kind, "actor_id": "human", "created_at": _now(),
               "payload": payload}
        line = json.dumps(env, sort_keys=True, separators=(",", ":")) + "\n"
        rc, out, err = self._progs.run("hw-session",
                                       ["command", self.session_id],
                                       stdin=line, ok=(0, 1))
        ans = None
        if out.strip():
            try:
                ans = json.loads(out.strip().splitlines()[-1])
            except ValueError:
                ans = None
        if ans is None or not isinstance(ans.get("projection"), dict):
            if rc:
                raise error_for(rc, last_line(err) or
                                "hw-session: the command was not applied",
                                "hw-session")
            raise HeartwoodError("heartwood: cannot read the answer of "
                                 "hw-session command", rc, "hw-session")
        self.view = build_view_model(ans["projection"])
        if rc:
            o = ans["projection"].get("lastCommandOutcome") or {}
            msg = o.get("message") if o.get("commandId") == cid else None
            raise NotAppliedError("heartwood: %s" % (
                msg or "the command was not applied"), 1, "hw-session")
        return self.view

    def _continue(self):
        """Start "hw-agent run" on the session, detached: in its own
        session, reparented away from the kernel, so that neither an
        interrupt nor a restart of the kernel stops it.  When an agent
        already runs the session it exits 75 having done nothing."""
        agent = self._progs.path("hw-agent")
        tmp = self._tmpdir()
        self._agent_n += 1
        err = os.path.join(tmp, "agent-%d.err" % self._agent_n)
        rc = os.path.join(tmp, "agent-%d.rc" % self._agent_n)
        script = ('("$1" run "$2" </dev/null >/dev/null 2>"$3"; '
                  'echo $? >"$4.tmp" && mv "$4.tmp" "$4") &')
        try:
            p = subprocess.Popen(["/bin/sh", "-c", script, "sh", agent,
                                  self.session_id, err, rc],
                                 cwd=self.project, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL,
                                 start_new_session=True)
            p.wait()
        except OSError as e:
            raise UnavailableError("heartwood: cannot run '%s': %s"
                                   % (agent, e.strerror), 69, "hw-agent")
        self._agent = (rc, err)
        self._started = time.monotonic()

    def _agent_status(self):
        """None when no run of ours is pending, "running", or the exit
        status of the run that ended (which is then forgotten), with its
        last line on standard error."""
        if self._agent is None:
            return None, ""
        rc, err = self._agent
        try:
            with open(rc) as f:
                code = int(f.read().strip() or "1")
        except FileNotFoundError:
            return "running", ""
        except ValueError:
            code = 1
        try:
            with open(err, errors="replace") as f:
                msg = last_line(f.read())
        except OSError:
            msg = ""
        self._agent = None
        return code, msg

    # ---- the session ----

    def chat(self, prompt):
        """Send prompt as a chat command and start the agent in the
        background; return the view once the message is recorded.  Nothing
        is recorded when the agent has no model route (UnavailableError,
        70)."""
        self._open()
        if not isinstance(prompt, str) or not prompt:
            raise UsageError("heartwood: a prompt is a non-empty string", 2)
        rep = self.project_readiness()
        for c in rep.get("checks", []):
            if c.get("check_id") == "model" and c.get("status") != "pass":
                raise UnavailableError(
                    "heartwood: the agent is not ready, so nothing was "
                    "recorded: %s; %s" % (c.get("summary"),
                                          c.get("next_action")), 70)
        v = self._command("chat", {"prompt": prompt})
        self._continue()
        return v

    def wait(self, timeout=None, since=None):
        """Block until the session stands at a stable boundary: an action
        set waiting for review, idle, paused, finished or error, with no
        agent run pending.  With since (a revision, such as
        view.revision), first wait until the session has moved past it:
        someone else's decision, say.  A run of ours that failed without
        leaving the session in error raises its error; timeout (seconds)
        raises WaitTimeout.  Returns the view."""
        self._known()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            code, msg = self._agent_status()
            if code == "running":
                self._tick(deadline)
                continue
            v = self.replay()
            if code not in (None, 0, 75) and v.status != "error":
                raise error_for(code, msg or "hw-agent: exited with status "
                                "%d" % code, "hw-agent")
            if (since is None or v.revision > since) and v.stable:
                return v
            if (since is None or v.revision > since) and \
                    time.monotonic() - self._started >= RESTART_S:
                # work is due (a decided set nobody took up) or another
                # process's run is at work: continue is idempotent, and
                # exits 75 at once while another run holds the session
                self._continue()
            self._tick(deadline)

    def _tick(self, deadline):
        if deadline is not None and time.monotonic() >= deadline:
            raise WaitTimeout("heartwood: session '%s' reached no stable "
                              "boundary in time" % self.session_id)
        time.sleep(POLL_S)

    def _decide(self, kind, group_id):
        self._known()
        v = self.replay()
        gid = group_id or v.pending_group_id
        if not gid:
            raise NotAppliedError("heartwood: No actions are awaiting "
                                  "review.", 1)
        pend = v.pending_approval
        if group_id is None and kind == "approve" and pend is not None \
                and pend.get("decidedElsewhere") is True:
            raise NotAppliedError(
                "heartwood: action set '%s' was decided elsewhere, not by "
                "you on this machine, and waits for your own decision: "
                "approve it by name (approve(%r)) or deny it" % (gid, gid), 1)
        v = self._command(kind, {"target_type": "action-set",
                                 "target_id": gid})
        self._continue()
        return v

    def approve(self, group_id=None):
        """Allow the complete action set group_id (the pending one by
        default) once; the agent runs it in the background."""
        return self._decide("approve", group_id)

    def deny(self, group_id=None):
        """Reject the complete action set; the agent is told that none of
        its members ran."""
        return self._decide("deny", group_id)

    def pause(self):
        """Pause the agent before its next model call or action set."""
        self._known()
        return self._command("pause", {})

    def resume(self):
        """Resume a paused session; the agent continues in the
        background."""
        self._known()
        v = self._command("resume", {})
        self._continue()
        return v

    def replay(self):
        """Verify the whole session and return its projection as a view
        (hw-session project): nothing is recorded."""
        self._known()
        self.view = build_view_model(self._progs.json(
            "hw-session", ["project", self.session_id]))
        return self.view

    def audit_export(self):
        """Export the audit log (hw-audit export, which records the
        export in the session and verifies it first): {filename,
        content}."""
        self._known()
        out = os.path.join(self._tmpdir(), "export-%s.jsonl" %
                           secrets.token_hex(8))
        self._progs.run("hw-audit", ["export", "--session", self.session_id,
                                     "--output", out])
        try:
            with open(out, encoding="utf-8") as f:
                content = f.read()
        finally:
            os.unlink(out)
        return {"filename": "%s-audit.jsonl" % self.session_id,
                "content": content}

    def audit_verify(self):
        """Verify the session's audit log from its genesis (hw-audit
        verify); IntegrityError (65) when it fails."""
        self._known()
        return self._progs.json("hw-audit", ["verify", "--session",
                                             self.session_id])

    # ---- the project ----

    def project_readiness(self):
        """The read-only readiness report (hw doctor --json)."""
        self._open()
        return self._progs.json("hw", ["doctor", "--json"], ok=(0, 1))

    def startup_plan(self, interface="notebook", port=8767):
        """The startup plan (hw doctor --plan): the phase the
        project is in, what to do next, and the readiness under it."""
        self._open()
        return self._progs.json("hw", ["doctor", "--plan",
                                       "--interface", interface,
                                       "--port", str(int(port))],
                                ok=(0, 1))

    def platform_capabilities(self):
        """The capability manifest of the platform detected from the
        environment (hw platform show), the one hw doctor and hw-serve
        report."""
        self._open()
        return self._progs.json("hw", ["platform", "show"])["capabilities"]

    def initialize_project(self):
        """Use this project: create its .heartwood store (hw init) and
        return the startup plan."""
        self._open()
        self._progs.run("hw", ["init"])
        return self.startup_plan()

    def browser_url(self, port=8767, origin=None):
        """The URL of the browser interface for this project: finds or
        starts hw-serve (in the Jupyter-proxy mode under Jupyter) and
        returns its URL; None when there is no browser route here."""
        self._open()
        from .serve import browser_url
        url, started = browser_url(self._progs, port, origin,
                                   self._tmpdir())
        if started is not None:
            from .serve import stop_serve
            self._serve = started
            # forgotten without close(): stopped when collected or at exit
            weakref.finalize(self, stop_serve, started)
        return url

    # ---- settings ----

    def action_settings(self):
        """The review mode: {confirmation_mode, mode} (hw-agent mode)."""
        self._open()
        return self._progs.json("hw-agent", ["mode"])

    def select_action_confirmation_mode(self, mode):
        """Choose the review mode: ask-every-time (always-confirm) or
        auto-approve-low-risk (confirm-risky); refused (NotAppliedError)
        while a set waits for review or a run is in progress."""
        self._open()
        if mode not in MODES:
            raise UsageError("heartwood: unknown review mode %r" % (mode,),
                             2)
        return self._progs.json("hw-agent", ["mode", MODES[mode]])

    # ---- research specialists ----

    def specialist_settings(self):
        """The research specialists the agent may delegate to, in their
        order (heartwood specialists --json): name, label, capability,
        availability and why not, limits, skills and tools."""
        self._open()
        return self._progs.json("heartwood", ["specialists", "--json"])

    # ---- the ChatGPT subscription sign-in (hw-model subscription) ----

    def subscription_sign_in(self):
        """Start the ChatGPT sign-in (the device flow of hw-model
        subscription sign-in, run as its own process, which keeps the
        tokens: they never enter the kernel).  Returns the pending record:
        verification_url and user_code to show, poll_interval_seconds;
        then call subscription_poll() until its status is complete."""
        self._open()
        if self._signin is not None:
            self._signin_end()
        argv = [self._progs.path("hw-model"), "subscription", "sign-in"]
        err = open(os.path.join(self._tmpdir(), "sign-in.err"), "w+b")
        try:
            proc = subprocess.Popen(argv, cwd=self.project,
                                    stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=err,
                                    start_new_session=True)
        except OSError as e:
            err.close()
            raise UnavailableError("heartwood: cannot run '%s': %s"
                                   % (argv[0], e.strerror), 69, "hw-model")
        self._signin = (proc, err)
        line = proc.stdout.readline()
        if not line:
            raise self._signin_failed()
        return json.loads(line)

    def _signin_end(self):
        proc, err = self._signin
        self._signin = None
        if proc.poll() is None:
            proc.terminate()
        proc.wait()
        proc.stdout.close()
        err.close()

    def _signin_failed(self):
        proc, err = self._signin
        proc.wait()
        err.seek(0)
        msg = last_line(err.read().decode("utf-8", "replace"))
        rc = proc.returncode if proc.returncode > 0 else 1
        self._signin_end()
        return error_for(rc, msg or "hw-model: the sign-in failed",
                         "hw-model")

    def subscription_poll(self):
        """The sign-in subscription_sign_in() started: {"status":
        "pending"} while it waits for the approval, the completed record
        once the tokens are saved; an expired or denied code raises the
        error hw-model reported."""
        self._open()
        if self._signin is None:
            raise UsageError("heartwood: no ChatGPT sign-in is in "
                             "progress: call subscription_sign_in()", 2)
        proc = self._signin[0]
        if proc.poll() is None:
            return {"connection_id": "openai-subscription",
                    "status": "pending"}
        if proc.returncode != 0:
            raise self._signin_failed()
        rec = {}
        for line in proc.stdout.read().decode("utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
        self._signin_end()
        return rec

    def subscription_status(self):
        """Whether this user is signed in with ChatGPT (hw-model
        subscription status); never a token."""
        self._open()
        return self._progs.json("hw-model", ["subscription", "status"])

    def subscription_sign_out(self):
        """Remove the saved ChatGPT tokens (hw-model subscription
        sign-out)."""
        self._open()
        return self._progs.json("hw-model", ["subscription", "sign-out"])

    # ---- skills (hw-skill) ----

    def skills(self):
        """The installed skills, one summary each (hw-skill list)."""
        self._open()
        _, out, _ = self._progs.run("hw-skill", ["list"])
        return [json.loads(l) for l in out.splitlines() if l.strip()]

    def skill_refresh(self, source=None):
        """Refresh the catalog sources (or one), revoking what they revoke
        (hw-skill refresh); one result per source."""
        self._open()
        _, out, _ = self._progs.run("hw-skill", ["refresh"] +
                                    ([source] if source else []))
        return [json.loads(l) for l in out.splitlines() if l.strip()]

    def skill_inspect(self, name, source=None):
        """What installing catalog skill name would install, with its tree
        digest (hw-skill inspect)."""
        self._open()
        return self._progs.json("hw-skill", ["inspect", name] +
                                (["--source", source] if source else []))

    def skill_install(self, name, expected_tree_sha256, source=None):
        """Install catalog skill name, exactly the tree digest approved;
        another digest is refused and recorded (NotAppliedError)."""
        self._open()
        return self._progs.json(
            "hw-skill", ["install", name, "--expected-tree-sha256",
                         expected_tree_sha256] +
            (["--source", source] if source else []))

    def skill_local_inspect(self, path):
        """A local skill directory, validated, with its tree digest."""
        self._open()
        return self._progs.json("hw-skill", ["local", "inspect", path])

    def skill_local_install(self, path, expected_tree_sha256):
        """Install the local skill at path, exactly the digest approved,
        as local and unreviewed."""
        self._open()
        return self._progs.json("hw-skill", ["local", "install", path,
                                             "--expected-tree-sha256",
                                             expected_tree_sha256])

    def skill_remove(self, name):
        """Stop giving skill name to the agent (hw-skill remove)."""
        self._open()
        return self._progs.json("hw-skill", ["remove", name])

    # ---- the workspace ----

    def files(self, path=".", depth=1):
        """The project's tree below path (hw-inspect tree)."""
        self._open()
        return self._progs.json("hw-inspect", ["tree", path, "--depth",
                                               str(int(depth))])

    def file(self, path):
        """One file of the project (hw-inspect file); its status says
        whether it is available."""
        self._open()
        return self._progs.json("hw-inspect", ["file", path])

    def changes(self):
        """The changed paths (hw-inspect changes)."""
        self._open()
        return self._progs.json("hw-inspect", ["changes", "--session",
                                               self.session_id])

    def diff(self, path):
        """One changed file's diff (hw-inspect diff)."""
        self._open()
        return self._progs.json("hw-inspect", ["diff", path, "--session",
                                               self.session_id])

    # ---- showing it ----

    def widget_spec(self):
        return build_widget_spec(self.replay())

    def widgets(self):
        """The eight sections as ipywidgets, with Allow once and Reject on
        the review section (they call approve and deny); the plain spec
        when ipywidgets is not installed."""
        return render_widgets(self.widget_spec(), self.approve, self.deny)

    def _shown(self):
        try:
            return build_widget_spec(self.replay()), None
        except HeartwoodError as e:
            return None, e

    def _repr_html_(self):
        spec, e = self._shown()
        if spec is None:
            from .render import section_html
            return section_html("heartwood", (str(e),))
        return render_html(spec)

    def __repr__(self):
        spec, e = self._shown()
        head = "NotebookSession(%r, project=%r)\n" % (self.session_id,
                                                      self.project)
        return head + (render_text(spec) if spec else str(e) + "\n")

    def _ipython_display_(self):
        from IPython.display import display, HTML
        if have_widgets():
            spec, e = self._shown()
            if spec is not None:
                display(render_widgets(spec, self.approve, self.deny))
                return
        display(HTML(self._repr_html_()))
