# An unknown session id: every method but chat raises UnavailableError 66
# with hw-session's message, and nothing is created.
# %%
from heartwood import NotebookSession, UnavailableError
s = NotebookSession("no-such-session")
for f in ("replay", "approve", "deny", "pause", "resume", "wait",
          "audit_export", "audit_verify"):
    try:
        getattr(s, f)()
        raise AssertionError(f)
    except UnavailableError as e:
        assert e.code == 66 and e.program == "hw-session", (f, e)
        assert e.message == "hw-session: no session 'no-such-session'", e
assert "no session &#x27;no-such-session&#x27;" in s._repr_html_()
print("unknown session refused")
