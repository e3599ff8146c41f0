"""Error types that the application layer raises and the CLI turns into messages.

Hierarchy::

    EngramError
    ├── ConfigError (ValueError)          bad run settings or environment values
    ├── ModelNotConfiguredError           no model endpoint for a command that needs one
    ├── ModelReplyError                   the model's reply could not be read, twice
    ├── ToolError                         a tool call the model made cannot be carried out
    │   └── PathOutsideProjectError (PermissionError)
    └── SessionError (LookupError)        unknown thread or checkpoint

Stores keep their own hierarchy in ``engram.stores._errors``.
"""

from __future__ import annotations


class EngramError(Exception):
    """Base class for every error engram raises on purpose."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        if hint:
            self.hint = hint


class ConfigError(EngramError, ValueError):
    """A run setting or environment variable has a value engram cannot use."""


class ModelNotConfiguredError(EngramError):
    """A command needs a chat model but none is configured."""

    hint = (
        "set ENGRAM_MODEL (e.g. gpt-4.1-mini or openai:gpt-4.1) and, for a non-OpenAI server, "
        "ENGRAM_BASE_URL (or OPENAI_BASE_URL) plus OPENAI_API_KEY"
    )


class ModelReplyError(EngramError):
    """The model's reply could not be read as a message, on the first call and the retry."""

    hint = (
        "the model sent something other than a message (for example a tool call whose "
        "arguments are not a JSON object); run the task again, or use another model"
    )


class ToolError(EngramError):
    """A tool call cannot be carried out; the message goes back to the model."""


class PathOutsideProjectError(ToolError, PermissionError):
    """A path resolves outside the project root or into a protected file."""


class SessionError(EngramError, LookupError):
    """A session (thread) or checkpoint does not exist."""

    hint = "run `engram sessions list` to see the sessions of this project"
