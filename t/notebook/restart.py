# %%
from heartwood import NotebookSession
s = NotebookSession()
s.chat("slow work")
s.wait(timeout=60)
s.approve()
# %% restart
import time
open("restart-now", "w").close()
time.sleep(60)
# %%
import os
from heartwood import NotebookSession
assert "s" not in globals()
open("go", "w").close()
v = NotebookSession().wait(timeout=60)
assert v.status == "idle", v.status
assert open("slow.txt").read() == "ok\n"
assert v.last_reply() == "Done slow.", v.last_reply()
print("new kernel:", v.last_reply())
