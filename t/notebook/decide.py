# One of two notebooks deciding the same set: DECIDER names which.
# %%
import os, time
from heartwood import NotebookSession, NotAppliedError
name = os.environ["DECIDER"]
s = NotebookSession()
gid = s.replay().pending_group_id
assert gid
open("ready-" + name, "w").close()
while not os.path.exists("go"):
    time.sleep(0.01)
try:
    s.approve(gid)
    out = "decided"
except NotAppliedError as e:
    out = "refused: " + e.message
with open("result-" + name, "w") as f:
    f.write(out + "\n")
