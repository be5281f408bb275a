# Pause while the agent works, then resume: the paused session stands
# still (the model is not called again) until resume.
# %%
import os, time
from heartwood import NotebookSession
s = NotebookSession()
s.chat("slow work")
v = s.wait(timeout=60)
s.approve()
end = time.monotonic() + 60
while s.replay().status != "running":
    assert time.monotonic() < end
    time.sleep(0.05)
s.pause()
open("go", "w").close()
v = s.wait(timeout=60)
assert v.status == "paused", v.status
assert open("slow.txt").read() == "ok\n"
assert v.last_reply() == "Slow.", v.last_reply()
assert "resume" in v.available_commands
# %%
s.resume()
v = s.wait(timeout=60)
assert v.status == "idle", v.status
assert v.last_reply() == "Done slow.", v.last_reply()
