"""Helpers shared by every CLI command: settings, JSON output, error reporting."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.segment import Segment

from engram.cli._storage_errors import storage_failures, storage_message
from engram.graph import ConfigError, EngramError, ModelNotConfiguredError, ModelReplyError
from engram.stores import StoreError, mask_url_passwords
from engram.stores.files import TERMINAL_UNSAFE, escape_controls, inert_json

if TYPE_CHECKING:
    from engram.graph import Context

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

# Messages are never hard-wrapped: a terminal wraps them itself, and a pipe, a log file or another
# program reading engram's output gets each sentence on one line. Tables are the exception: they
# are printed with ``print_table`` so that they still fit the terminal when there is one.
OUT_CONSOLE_OPTIONS: dict[str, Any] = {"highlight": False, "soft_wrap": True}
ERR_CONSOLE_OPTIONS: dict[str, Any] = {**OUT_CONSOLE_OPTIONS, "stderr": True}


class SafeConsole(Console):
    """A Rich console that never writes a control character it did not make itself.

    File contents, names, symbols, commit messages and model output all reach the terminal
    through these consoles; the text of every segment is escaped (``escape_controls``) before
    Rich adds its own styles and cursor moves (control segments), so no repository or model
    text can repaint the screen, retitle the window or forge a line with a carriage return.
    """

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            Segment(escape_controls(segment.text), segment.style)
            if segment.control is None and TERMINAL_UNSAFE.search(segment.text)
            else segment
            for segment in buffer
        )


out_console = SafeConsole(**OUT_CONSOLE_OPTIONS)
err_console = SafeConsole(**ERR_CONSOLE_OPTIONS)


def reset_consoles() -> None:
    """Set both consoles up again from the current environment and standard streams.

    A console reads ``COLUMNS``, ``NO_COLOR``, ``TERM`` and whether its stream is a terminal
    when it is made; the warm server (``engram serve``) calls this for each command it runs
    for another terminal.
    """
    out_console.__init__(**OUT_CONSOLE_OPTIONS)  # type: ignore[misc]
    err_console.__init__(**ERR_CONSOLE_OPTIONS)  # type: ignore[misc]


UNBOUNDED = 1_000_000
"""The width a renderable is measured in off a terminal (its natural width is then used)."""

EXIT_USER_ERROR = 2
EXIT_FAILURE = 1
ENDPOINT_HINT = (
    "check that the server is running and that ENGRAM_BASE_URL (or OPENAI_BASE_URL), "
    "ENGRAM_MODEL and OPENAI_API_KEY are right"
)

HISTORY_HINT = (
    "engram now closes tool calls left without results before each model call, so "
    "`engram sessions resume ID` (or continuing with `engram run --thread ID TASK`) repairs a "
    "session an older version left broken; if the endpoint still refuses it, fork from an "
    "earlier checkpoint: `engram sessions history ID`, then `engram sessions fork ID "
    "--checkpoint C`"
)
HISTORY_REJECTION = re.compile(
    r"tool[_ ]call|role ['\"]?tool|tool message|invalid_messages|messages\[\d+\]", re.IGNORECASE
)
"""What a 400 about the message history says (OpenAI, DeepSeek, vLLM, Ollama wordings)."""


def load_context(path: Path | None = None, **overrides: Any) -> Context:
    """Build run settings: the project from ``--path``, else ``ENGRAM_PROJECT``, else the CWD."""
    from engram.graph import Context  # not needed by --help

    root = (path or Path(os.environ.get("ENGRAM_PROJECT") or Path.cwd())).expanduser().resolve()
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise ConfigError(
            f"project path {root} {what}",
            hint="pass the project's root folder with --path, or cd into it",
        )
    project = str(root)
    home = os.environ.get("ENGRAM_HOME")
    return Context.from_env(project=project, engram_home=home, **overrides)


def print_table(renderable: Any, console: Console | None = None) -> None:
    """Print a table (or a tree, code, another laid-out renderable) without losing a character.

    On a terminal it is fitted to the terminal's width. Anywhere else (a pipe, a file, another
    program) there is no width to fit, so it is printed at its natural width: code lines, paths
    and ids are never cut or folded to a made-up 80 columns.
    """
    console = console or out_console
    if console.is_terminal:
        console.print(renderable, soft_wrap=False)
        return
    from rich.measure import Measurement

    natural = Measurement.get(console, console.options.update_width(UNBOUNDED), renderable)
    width = console.width
    console.width = max(width, natural.maximum)
    try:
        console.print(renderable, soft_wrap=False)
    finally:
        console.width = width


def json_text(data: Any, indent: int | None = 2) -> str:
    r"""Return ``data`` as JSON (stable key order, non-ASCII text as is).

    DEL, the C1 controls, the bidirectional controls and lone surrogates are written as
    ``\uNNNN`` escapes: the same string to a JSON reader, inert when the JSON is shown in a
    terminal, and writable as UTF-8 (JSON escapes the C0 controls itself).
    """
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str)
    return inert_json(text)


def print_json(data: Any) -> None:
    """Write ``data`` as JSON to stdout (no Rich markup; see ``json_text``)."""
    sys.stdout.write(json_text(data) + "\n")
    sys.stdout.flush()


def words(values: Iterable[str] | None) -> str:
    """Return a task or query given as one quoted argument or as several words, spaces between.

    ``engram run fix the login bug`` and ``engram run "fix the login bug"`` mean the same; a
    quoted argument keeps its own line breaks and spacing.
    """
    return " ".join(values or ())


def report_error(message: str, hint: str = "") -> None:
    """Print an error with what to do next (URL passwords masked)."""
    err_console.print(f"[bold red]error:[/] {mask_url_passwords(message)}")
    if hint:
        err_console.print(f"[dim]hint:[/] {mask_url_passwords(hint)}")


def fail(message: str, hint: str = "", code: int = EXIT_USER_ERROR) -> NoReturn:
    """Print an error with what to do next and exit with ``code`` (URL passwords masked)."""
    report_error(message, hint)
    raise typer.Exit(code)


def known_failure(exc: BaseException) -> tuple[str, str, int] | None:
    """Return the message, hint and exit code for an error engram explains, else None.

    engram's own errors and the stores' are the user's to fix (``EXIT_USER_ERROR``); a model
    endpoint that cannot be reached or refuses a request, a model reply that cannot be read and
    a storage failure are not (``EXIT_FAILURE``).
    """
    if isinstance(exc, ModelReplyError):  # the model's doing, not the user's
        return str(exc), exc.hint, EXIT_FAILURE
    if isinstance(exc, (EngramError, StoreError)):
        return str(exc), getattr(exc, "hint", ""), EXIT_USER_ERROR
    if isinstance(exc, _endpoint_errors()):
        hint = HISTORY_HINT if is_history_rejection(exc) else ENDPOINT_HINT
        return _endpoint_message(exc), hint, EXIT_FAILURE
    if isinstance(exc, storage_failures()):
        found = storage_message(exc)
        return None if found is None else (*found, EXIT_FAILURE)
    return None


def _endpoint_errors() -> tuple[type[BaseException], ...]:
    """Return the OpenAI client's endpoint errors, if that client was ever imported.

    An ``openai`` error can only be raised once the package is loaded, so nothing is imported
    here (importing ``openai`` costs half a second of CLI start-up).
    """
    openai = sys.modules.get("openai")
    if openai is None:
        return ()
    return (openai.APIConnectionError, openai.APIStatusError)


def is_history_rejection(exc: BaseException) -> bool:
    """Return True when the endpoint refused the request because of its message history."""
    if getattr(exc, "status_code", None) != 400:
        return False
    text = f"{getattr(exc, 'code', '') or ''} {getattr(exc, 'message', '') or exc}"
    return HISTORY_REJECTION.search(text) is not None


def _endpoint_message(exc: BaseException) -> str:
    """Describe a failed model call, naming the endpoint's base URL."""
    request = getattr(exc, "request", None)
    url = str(getattr(request, "url", "") or "the configured endpoint")
    base = url.removesuffix("/chat/completions")
    status = getattr(exc, "status_code", None)
    detail = getattr(exc, "message", "") or str(exc)
    if status is None:
        return f"cannot reach the model endpoint {base}: {detail}"
    detail = detail.removeprefix(f"Error code: {status} - ")
    if is_history_rejection(exc):
        return (
            f"the session history was invalid: the model endpoint {base} refused it "
            f"({status}: {detail})"
        )
    return f"the model endpoint {base} answered {status}: {detail}"


def handle_errors(func: F) -> F:
    """Turn engram's own errors, and storage failures, into a message and exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KeyboardInterrupt:
            err_console.print("[yellow]interrupted[/]")
            raise typer.Exit(130) from None
        except Exception as exc:
            found = known_failure(exc)
            if found is None:
                raise
            fail(*found)

    return wrapper  # type: ignore[return-value]


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion on a new event loop and return its result.

    ``asyncio`` is imported here, by the commands that run the graph, because importing it
    (with ``ssl``, ``socket`` and ``concurrent.futures``) costs about 20 ms that
    ``engram --version`` and ``--help`` should not pay.
    """
    import asyncio

    return asyncio.run(coroutine)


def require_model(context: Context) -> None:
    """Fail with a helpful message when no chat model is configured."""
    if not context.model:
        error = ModelNotConfiguredError("no chat model is configured")
        fail(str(error), error.hint)
