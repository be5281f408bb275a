# The notebook waits while the set is decided in the terminal.
# %%
from heartwood import NotebookSession
s = NotebookSession()
s.chat("record a run and write notes")
v = s.wait(timeout=60)
assert v.pending_group_id
open("waiting", "w").close()
v = s.wait(timeout=60, since=v.revision)
assert v.status == "idle", v.status
assert v.last_reply() == "Done: ran.txt and notes.md.", v.last_reply()
assert open("ran.txt").read() == "run\n"
print("seen:", v.last_reply())
