"""heartwood from a Jupyter kernel: the notebook bridge.

    from heartwood import NotebookSession
    s = NotebookSession()            # session-main of the current directory
    s.chat("add a test for the parser")
    v = s.wait()                     # the next stable boundary
    v.pending_approval.actions[0].arguments
    s.approve(); s.wait()

The bridge drives the suite's programs (hw-session, hw-agent, hw-audit,
hw-inspect, hw, hw-serve) and never reimplements them; see
heartwood-notebook(7).
"""

from .errors import (BusyError, HeartwoodError, IntegrityError,
                     NotAppliedError, UnavailableError, UsageError)
from .render import (SECTIONS, WidgetSpec, build_widget_spec, render_html,
                     render_text, render_widgets)
from .session import NotebookSession, WaitTimeout
from .view import NotebookViewModel, View, build_view_model

__all__ = ["NotebookSession", "NotebookViewModel", "View",
           "build_view_model", "WidgetSpec", "build_widget_spec",
           "render_widgets", "render_html", "render_text", "SECTIONS",
           "HeartwoodError", "NotAppliedError", "UsageError",
           "IntegrityError", "UnavailableError", "BusyError", "WaitTimeout"]
