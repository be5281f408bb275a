# %%
from heartwood import NotebookSession
s = NotebookSession()
s.chat("slow work")
s.wait(timeout=60)
s.approve()
# %% interrupt
import os, time
# the tool runs (an interrupt before it started would show nothing
# about a running agent)
for _ in range(1200):
    if os.path.exists("started"):
        break
    time.sleep(0.05)
assert os.path.exists("started")
open("interrupt-now", "w").close()
s.wait(timeout=60)
# %%
open("go", "w").close()
v = s.wait(timeout=60)
assert v.status == "idle", v.status
assert open("slow.txt").read() == "ok\n"
assert v.last_reply() == "Done slow.", v.last_reply()
print("after interrupt:", v.last_reply())
