# Bad input: an unknown session id, an invalid one, a decision with
# nothing pending.
# %%
from heartwood import (NotebookSession, UnavailableError, UsageError,
                       NotAppliedError, HeartwoodError)
try:
    NotebookSession("no-such-session").replay()
    raise AssertionError("replay of an unknown session")
except UnavailableError as e:
    assert e.code == 66 and e.message == "hw-session: no session 'no-such-session'", e
for f in ("approve", "deny", "pause", "resume", "wait", "audit_export"):
    try:
        getattr(NotebookSession("no-such-session"), f)()
        raise AssertionError(f)
    except UnavailableError as e:
        assert e.code == 66, (f, e)
try:
    NotebookSession("../etc")
    raise AssertionError("an invalid id")
except UsageError as e:
    assert e.code == 2 and "invalid session id" in e.message, e
try:
    NotebookSession().approve()
    raise AssertionError("nothing pending")
except NotAppliedError as e:
    assert e.code == 1 and e.message == "heartwood: No actions are awaiting review.", e
assert isinstance(NotAppliedError("x"), HeartwoodError)
print("bad input refused")
# %%
# no model route: nothing is recorded
from heartwood import WaitTimeout
try:
    NotebookSession().chat("hello")
    raise AssertionError("a chat without a route")
except UnavailableError as e:
    assert e.code == 70, e
    assert e.message.startswith("heartwood: the agent is not ready, so nothing was recorded: "), e.message
assert NotebookSession().replay().event_count == 0
# a wait for a change that never comes
try:
    NotebookSession().wait(timeout=0.3, since=10**9)
    raise AssertionError("no timeout")
except WaitTimeout as e:
    assert isinstance(e, TimeoutError)
    assert e.message == "heartwood: session 'session-main' reached no stable boundary in time", e
# the view is read-only
v = NotebookSession().replay()
for attempt in (lambda: setattr(v, "revision", 5),
                lambda: setattr(v.lifecycle, "status", "idle")):
    try:
        attempt()
        raise AssertionError("assigned")
    except AttributeError:
        pass
try:
    NotebookSession().select_action_confirmation_mode("sometimes")
    raise AssertionError("a mode")
except UsageError as e:
    assert e.code == 2
try:
    NotebookSession().file("../x")
    raise AssertionError("a path outside")
except UsageError as e:
    assert e.message == "hw-inspect: invalid path '../x': HW-WORKSPACE-001 not a normalized project-relative path", e
print("bad input refused")
