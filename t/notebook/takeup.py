# A set decided while no agent ran: wait() continues the agent, which runs
# it, once.
# %%
import os
from heartwood import NotebookSession
v = NotebookSession().wait(timeout=60)
assert v.status == "idle", v.status
assert v.last_reply() == "Done: ran.txt and notes.md.", v.last_reply()
assert open("ran.txt").read() == "run\n"
print("taken up:", v.last_reply())
