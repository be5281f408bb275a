# %%
from heartwood import NotebookSession
s = NotebookSession()
s.chat("slow work")
s.wait(timeout=60)
s.approve()
# %% interrupt
open("interrupt-now", "w").close()
s.wait(timeout=60)
# %%
open("go", "w").close()
v = s.wait(timeout=60)
assert v.status == "idle", v.status
assert open("slow.txt").read() == "ok\n"
assert v.last_reply() == "Done slow.", v.last_reply()
print("after interrupt:", v.last_reply())
