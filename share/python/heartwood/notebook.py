"""heartwood.notebook: the reference's module name for the bridge."""

from . import (BusyError, HeartwoodError, IntegrityError,  # noqa: F401
               NotAppliedError, NotebookSession, NotebookViewModel,
               SECTIONS, UnavailableError, UsageError, View, WaitTimeout,
               WidgetSpec, build_view_model, build_widget_spec,
               render_html, render_text, render_widgets, __all__)
