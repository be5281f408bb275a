# A rejection through the widgets' Reject button; the agent's reply, which
# holds markup and a bidirectional override, is shown escaped.
# %%
import os
import ipywidgets
from heartwood import NotebookSession
s = NotebookSession()
s.chat("record a run")
v = s.wait(timeout=60)
assert v.pending_group_id
box = s.widgets()
assert isinstance(box, ipywidgets.VBox)
buttons = [w for k in box.children if isinstance(k, ipywidgets.HBox)
           for w in k.children]
assert [b.description for b in buttons] == ["Reject 2 Actions",
                                            "Allow 2 Actions Once"]
# what the frontend sends when the button is pressed (ipywidgets 6 has no
# Button.click)
buttons[0]._handle_button_msg(None, {"event": "click"}, [])
# %%
v = s.wait(timeout=60)
assert v.status == "idle", v.status
assert [a.state for a in v.actions] == ["rejected", "rejected"]
assert not os.path.exists("ran.txt")
assert "<script>" in v.last_reply()
html = s._repr_html_()
assert "<script>" not in html
assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
assert "\u202e" not in html and "\\u202e" in html
# %%
import sys
sys.modules["ipywidgets"] = None
spec = s.widgets()
assert spec.sections[0][0] == "Conversation", spec
assert spec.group_id is None
assert "None" in repr(s)
