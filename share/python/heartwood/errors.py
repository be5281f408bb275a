"""The bridge's exceptions: each carries the program's message and exit code.

The exit codes are the suite's one table (hw(7)); the classes group them the
way a notebook reacts to them.
"""


class HeartwoodError(Exception):
    """A program of the suite failed, or the bridge could not drive it.

    message is what the program said (its last line on standard error, such
    as "hw-session: command line 1: ..."), code its exit status and program
    its name; code is None when no program ran.
    """

    def __init__(self, message, code=None, program=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.program = program

    def __str__(self):
        if self.code is None:
            return self.message
        return "%s (exit status %d)" % (self.message, self.code)


class NotAppliedError(HeartwoodError):
    """Exit status 1: a command was recorded as not applied (the projection's
    availableCommands did not allow it: a set already decided, a pause while
    nothing runs), nothing awaits review, or a view is not available."""


class UsageError(HeartwoodError):
    """Exit status 2: an invalid session id, path, mode or argument."""


class IntegrityError(HeartwoodError):
    """Exit status 65: the session's logs or an audit log failed
    verification, or a program was given malformed input."""


class UnavailableError(HeartwoodError):
    """Exit status 66 (no such session or file), 69 (a program of the suite
    is missing or could not start), 70 (the agent has no model route) or 74
    (an I/O error)."""


class BusyError(HeartwoodError):
    """Exit status 75: another process holds the session's writer lease
    past the wait, or a command was interrupted after it was accepted and
    the session takes no more commands (recovery required)."""


_BY_CODE = {
    1: NotAppliedError,
    2: UsageError,
    65: IntegrityError,
    66: UnavailableError,
    69: UnavailableError,
    70: UnavailableError,
    74: UnavailableError,
    75: BusyError,
}


def error_for(code, message, program=None):
    """The exception for a program that exited with code and said message."""
    return _BY_CODE.get(code, HeartwoodError)(message, code, program)
