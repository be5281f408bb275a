"""The eight sections of the reference's notebook view, from a view model.

build_widget_spec turns a projection into plain sections of text items;
render_text and render_html show them; render_widgets makes ipywidgets out
of them when ipywidgets is installed, with Allow once and Reject buttons
on the review section.  Text from the model, files and tools is untrusted:
every item is escaped for HTML, and control characters, C1 controls and
bidirectional overrides are shown as \\xNN or \\uXXXX, as heartwood(1)
shows them on a terminal.
"""

import collections
import html
import json

SECTIONS = ("Conversation", "Activity", "Action Review", "Agent Actions",
            "Tasks", "Suggested Next Steps", "Runtime", "Specialists")

ACTIVITY_SHOWN = 50

WidgetSpec = collections.namedtuple("WidgetSpec", "sections group_id")
WidgetSpec.__doc__ = """The sections to show: a tuple of (title, items)
pairs, items a tuple of strings, in SECTIONS order; group_id is the action
set that awaits review, or None."""

_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {
    0x200E, 0x200F, 0x061C}

_RISK = {"low": "Low", "medium": "Medium", "high": "High"}


def safe_text(s):
    """s with control characters (but newline and tab), DEL, C1 controls
    and bidirectional controls escaped."""
    if s is None:
        return ""
    if not isinstance(s, str):
        s = str(s)
    out = []
    for ch in s:
        c = ord(ch)
        if ch in "\n\t":
            out.append(ch)
        elif c < 0x20 or c == 0x7F:
            out.append("\\x%02x" % c)
        elif 0x80 <= c < 0xA0 or c in _BIDI:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    return "".join(out)


def _canon(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True)


def _d(view):
    return view.to_dict() if hasattr(view, "to_dict") else dict(view or {})


def _member(i, a):
    risk = a.get("risk")
    return "%d. %s [%s · %s]\n%s" % (
        i, a.get("summary") or a.get("toolName"), a.get("toolName"),
        _RISK.get(risk, "Not Classified"), _canon(a.get("arguments")))


def _conversation(p):
    items = []
    for e in p.get("conversation") or []:
        text = e.get("content") or e.get("detail")
        items.append("[%03d] %s%s" % (e.get("sequence", 0), e.get("label"),
                                      ": %s" % text if text else ""))
    return tuple(items)


def _activity(p):
    acts = p.get("activity") or []
    items = []
    if len(acts) > ACTIVITY_SHOWN:
        items.append("... %d earlier" % (len(acts) - ACTIVITY_SHOWN))
        acts = acts[-ACTIVITY_SHOWN:]
    for e in acts:
        d = e.get("detail")
        items.append("[%03d] %s%s" % (e.get("sequence", 0), e.get("label"),
                                      " · %s" % d if d else ""))
    return tuple(items)


def _review(p):
    pend = p.get("pendingApproval")
    if not isinstance(pend, dict):
        return ()
    acts = pend.get("actions") or []
    items = ["Review %d action(s) as one action set (%s): one decision "
             "for the complete set" % (len(acts), pend.get("groupId"))]
    items.extend(_member(i + 1, a) for i, a in enumerate(acts))
    return tuple(items)


def _actions(p):
    items = []
    for a in p.get("actions") or []:
        if a.get("state") == "awaiting-review":
            continue
        o = a.get("outcome") or {}
        s = "%s [%s · %s]" % (a.get("summary") or a.get("toolName"),
                              a.get("toolName"), a.get("state"))
        if o.get("summary"):
            s += "\n" + o["summary"]
        if o.get("result"):
            s += "\n" + o["result"]
        items.append(s)
    return tuple(items)


def _tasks(p):
    items = []
    for t in p.get("taskPlan") or []:
        if isinstance(t, dict):
            st = t.get("status")
            items.append("[%s] %s" % ("x" if st == "done" else
                                      "~" if st == "in_progress" else " ",
                                      t.get("title") or t.get("notes") or ""))
        else:
            items.append(str(t))
    return tuple(items)


def _suggestions(p):
    return tuple("%s: %s" % (s.get("label"), s.get("prompt"))
                 for s in p.get("suggestions") or [])


def _runtime(p):
    items = []
    rs = p.get("researcherStatus") or {}
    lc = p.get("lifecycle") or {}
    items.append("Status: %s · %s" % (rs.get("label"), rs.get("detail")))
    items.append("Lifecycle: %s" % lc.get("status"))
    notice = p.get("researcherNotice")
    if isinstance(notice, dict):
        items.append("Notice: %s · %s" % (notice.get("title") or
                                          notice.get("label"),
                                          notice.get("message") or
                                          notice.get("detail")))
    ctx = p.get("context") or {}
    if ctx.get("modelEndpoint"):
        items.append("Model route: %s (%s)" % (ctx.get("modelEndpoint"),
                                              ctx.get("modelReason")))
    u = p.get("usage") or {}
    if u.get("callCount"):
        items.append("Model activity: %s calls · %s tokens · %s" % (
            u.get("callCount"), (u.get("promptTokens") or 0) +
            (u.get("completionTokens") or 0), u.get("modelName")))
    return tuple(items)


def _specialists(p):
    return tuple("%s (%s): %s" % (s.get("agentName"), s.get("roleLabel"),
                                  s.get("statusLabel"))
                 for s in p.get("subagents") or [])


def build_widget_spec(view):
    """The WidgetSpec of a view model (or a projection dict)."""
    p = _d(view)
    f = (_conversation, _activity, _review, _actions, _tasks, _suggestions,
         _runtime, _specialists)
    pend = p.get("pendingApproval")
    return WidgetSpec(tuple((t, fn(p)) for t, fn in zip(SECTIONS, f)),
                      pend.get("groupId") if isinstance(pend, dict) else None)


def render_text(spec):
    """The spec as plain text: each section's title, then its items
    indented, or None."""
    out = []
    for title, items in spec.sections:
        out.append(title)
        if not items:
            out.append("  None")
        for it in items:
            out.extend("  " + l for l in safe_text(it).split("\n"))
    return "\n".join(out) + "\n"


def section_html(title, items):
    """One section as escaped HTML: a heading, then each item in <pre>."""
    body = "".join("<pre>%s</pre>" % html.escape(safe_text(i), quote=True)
                   for i in items) or "<p>None</p>"
    return ("<section class=\"heartwood-section\"><h4>%s</h4>%s</section>"
            % (html.escape(title), body))


def render_html(spec):
    """The spec as one escaped HTML fragment."""
    return ("<div class=\"heartwood\">%s</div>"
            % "".join(section_html(t, i) for t, i in spec.sections))


def have_widgets():
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def render_widgets(spec, on_approve=None, on_deny=None):
    """A VBox of HTML sections, the review section with Allow once and
    Reject buttons calling on_approve(group_id) and on_deny(group_id) when
    a set awaits review; the spec itself when ipywidgets is missing."""
    try:
        import ipywidgets as w
    except ImportError:
        return spec
    kids = []
    for title, items in spec.sections:
        kids.append(w.HTML(value=section_html(title, items)))
        if title == "Action Review" and spec.group_id:
            n = len(items) - 1
            allow = w.Button(description="Allow %d Action%s Once" %
                             (n, "" if n == 1 else "s"),
                             button_style="success")
            reject = w.Button(description="Reject %d Action%s" %
                              (n, "" if n == 1 else "s"),
                              button_style="danger")
            status = w.HTML(value="")
            gid = spec.group_id

            def decide(fn, label):
                def click(_b):
                    allow.disabled = reject.disabled = True
                    try:
                        if fn:
                            fn(gid)
                        status.value = "<p>%s</p>" % html.escape(label)
                    except Exception as e:
                        status.value = "<p>%s</p>" % html.escape(
                            safe_text(str(e)))
                        allow.disabled = reject.disabled = False
                return click

            allow.on_click(decide(on_approve, "Allowed once: the agent "
                                  "continues."))
            reject.on_click(decide(on_deny, "Rejected: the agent is told "
                                   "that none of them ran."))
            kids.append(w.HBox([reject, allow]))
            kids.append(status)
    return w.VBox(kids)
