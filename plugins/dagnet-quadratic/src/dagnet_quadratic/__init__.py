"""``quadratic``: f(x) = a*x**2 + b*x + c, element-wise, as a dagnet operator plugin.

Installing this distribution is all it takes: dagnet finds the plugin through
its ``dagnet`` entry point, and ``dagnet.nd.quadratic`` / ``dagnet.sym.quadratic``
appear with the operator's docstring.  Nothing needs importing by hand.
"""

from __future__ import annotations

__version__ = "0.1.0"
