# A whole task from a notebook: chat, wait, review the set's members and
# arguments, approve, wait, the tool's effect on disk, the agent's reply,
# the audit export and its verification; the eight sections as HTML.
# %%
import os
from heartwood import NotebookSession
s = NotebookSession()
v = s.chat("record a run and write notes")
assert v.conversation[-1].content == "record a run and write notes", v
# %%
v = s.wait(timeout=60)
assert v.status == "waiting-for-confirmation", v.status
p = v.pending_approval
assert [a.tool_name for a in p.actions] == ["terminal", "file_editor"]
assert p.actions[0].arguments["command"] == "echo run >> ran.txt"
assert p.actions[1].arguments["path"] == "notes.md"
assert p.actions[1].arguments["file_text"] == "notes\n"
assert not os.path.exists("ran.txt")
html = s._repr_html_()
for title in ("Conversation", "Activity", "Action Review", "Agent Actions",
              "Tasks", "Suggested Next Steps", "Runtime", "Specialists"):
    assert "<h4>%s</h4>" % title in html, title
assert "echo run &gt;&gt; ran.txt" in html
# %%
s.approve()
v = s.wait(timeout=60)
assert v.status == "idle", v.status
assert open("ran.txt").read() == "run\n"
assert open("notes.md").read() == "notes\n"
assert v.last_reply() == "Done: ran.txt and notes.md.", v.last_reply()
assert [a.state for a in v.actions] == ["succeeded", "succeeded"]
# %%
e = s.audit_export()
assert e["filename"] == "session-main-audit.jsonl", e["filename"]
with open("exported.jsonl", "w") as f:
    f.write(e["content"])
r = s.audit_verify()
assert r["event_count"] == len(e["content"].splitlines()), r
print("events", r["event_count"])
# %%
text = repr(s)
assert "Done: ran.txt and notes.md." in text
ch = s.changes()
assert ch["schema_version"] == "heartwood.workspace-changes.v1", ch
assert [c["path"] for c in ch["changes"]] == ["notes.md"], ch
d = s.diff("notes.md")
assert d["status"] == "non-git" and d["source"] == "session-action", d
assert d["original"] is None and d["modified"] == "notes\n", d
assert s.file("notes.md")["content"] == "notes\n"
assert any(x["path"] == "ran.txt" for x in s.files()["entries"])
assert s.action_settings()["mode"] == "ask-every-time"
s.close()
