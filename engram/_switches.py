"""The words that turn an environment setting on or off (``ENGRAM_SERVE=off``, ``=yes``).

Kept apart so the CLI client reads them without importing anything else.
"""

from __future__ import annotations

ON_VALUES = frozenset({"1", "on", "true", "yes"})
OFF_VALUES = frozenset({"0", "off", "false", "no"})
