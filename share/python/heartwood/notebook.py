"""heartwood.notebook: the reference's module name for the bridge."""

from . import *  # noqa: F401,F403
from . import __all__  # noqa: F401
