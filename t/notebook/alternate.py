# The notebook's turn in a session that the terminal continues too: TASK
# names the task, and the conversation holds every earlier one.
# %%
import os
from heartwood import NotebookSession
s = NotebookSession()
before = [e.content for e in s.replay().conversation if e.role == "user"]
s.chat(os.environ["TASK"])
s.wait(timeout=60)
s.approve()
v = s.wait(timeout=60)
assert v.status == "idle", v.status
users = [e.content for e in v.conversation if e.role == "user"]
assert users == before + [os.environ["TASK"]], users
print("tasks:", users)
