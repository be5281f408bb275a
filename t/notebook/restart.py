# %%
from heartwood import NotebookSession
s = NotebookSession()
s.chat("slow work")
s.wait(timeout=60)
s.approve()
# %% restart
import os, time
# the tool runs (a kernel that went before it started would leave
# nothing to survive)
for _ in range(1200):
    if os.path.exists("started"):
        break
    time.sleep(0.05)
assert os.path.exists("started")
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
