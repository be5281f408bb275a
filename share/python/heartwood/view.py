"""A read-only view of a session's projection, in snake_case.

The projection is computed by the programs (hw-session project, follow and
command print it); this module only wraps the object they printed.  An
attribute in snake_case reads the camelCase field (view.pending_approval is
the projection's pendingApproval); an item reads the field by its own name
(action.arguments["file_text"]), so the exact arguments of an action keep
their keys.  Objects become views, arrays tuples; nothing can be assigned.
"""

import copy
import json
import re

_CAMEL = re.compile(r"_([a-z0-9])")


def camel(name):
    """pending_approval -> pendingApproval."""
    return _CAMEL.sub(lambda m: m.group(1).upper(), name)


def _wrap(v):
    if isinstance(v, dict):
        return View(v)
    if isinstance(v, list):
        return tuple(_wrap(x) for x in v)
    return v


class View:
    """A read-only view of one JSON object."""

    __slots__ = ("_d",)

    def __init__(self, d):
        object.__setattr__(self, "_d", d)

    def __getattr__(self, name):
        d = object.__getattribute__(self, "_d")
        if name in d:
            return _wrap(d[name])
        c = camel(name)
        if c in d:
            return _wrap(d[c])
        raise AttributeError(name)

    def __getitem__(self, key):
        return _wrap(self._d[key])

    def __contains__(self, key):
        return key in self._d

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def get(self, key, default=None):
        return _wrap(self._d[key]) if key in self._d else default

    def keys(self):
        return self._d.keys()

    def __setattr__(self, name, value):
        raise AttributeError("a heartwood view is read-only")

    def __delattr__(self, name):
        raise AttributeError("a heartwood view is read-only")

    def __eq__(self, other):
        return isinstance(other, View) and self._d == other._d

    __hash__ = None

    def to_dict(self):
        """A deep copy of the object, as the program printed it."""
        return copy.deepcopy(self._d)

    def __repr__(self):
        return "View(%s)" % json.dumps(self._d, sort_keys=True)[:200]


STABLE = ("waiting-for-confirmation", "idle", "paused", "finished", "error")


class NotebookViewModel(View):
    """The projection of one session (heartwood.session-projection.v1).

    Besides every field of the projection in snake_case (session_id,
    revision, lifecycle, conversation, actions, pending_approval,
    researcher_status, task_plan, suggestions, usage, subagents, ...):
    status, the lifecycle's status; stable, whether the session stands at
    a stable boundary (waiting for review, idle, paused, finished or
    error: nothing is due); and pending_group_id.
    """

    __slots__ = ()

    @property
    def status(self):
        lc = self._d.get("lifecycle") or {}
        return lc.get("status")

    @property
    def pending_group_id(self):
        p = self._d.get("pendingApproval")
        return p.get("groupId") if isinstance(p, dict) else None

    @property
    def stable(self):
        """True at a stable boundary.  A set that was decided but has not
        run yet (waiting-for-confirmation with no pending set) is not one:
        an agent run is due."""
        st = self.status
        if st not in STABLE:
            return False
        if st == "waiting-for-confirmation":
            return self.pending_group_id is not None
        return True

    def last_reply(self):
        """The text of the agent's last message, or None."""
        for e in reversed(self._d.get("conversation") or []):
            if e.get("role") == "agent":
                return e.get("content")
        return None


def build_view_model(projection):
    """The view model of a projection (a dict, or its JSON text)."""
    if isinstance(projection, (str, bytes)):
        projection = json.loads(projection)
    if not isinstance(projection, dict):
        raise TypeError("a projection is a JSON object")
    return NotebookViewModel(projection)
