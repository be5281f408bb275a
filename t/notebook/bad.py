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
