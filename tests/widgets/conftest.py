"""Fixtures for the explorer tests (defined in :mod:`widget_checks`, found by pytest here).

``grad_mode_restored`` is autouse: every explorer test starts and ends with grad mode on.
"""

from widget_checks import grad_mode_restored, no_dot, real_torch  # noqa: F401 - pytest finds fixtures by name here
