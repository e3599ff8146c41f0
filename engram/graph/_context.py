"""Run settings: the graph's ``context_schema``, JSON-only so LangGraph Studio can render it.

Every entry point resolves settings in one order: the run's own context (Studio's form, the
``context=`` of an API or library run, CLI flags) > the ``ENGRAM_*`` environment of the
process that serves the graph > the defaults below. An empty string (or null) in a run's
context means "not set". ``Context.from_env()`` reads the environment; ``with_defaults`` turns
those values into the defaults of the schema a server declares, so a run that leaves a field
empty gets the server's value.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, make_dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from engram._switches import OFF_VALUES, ON_VALUES
from engram.graph._errors import ConfigError
from engram.stores.project import ProjectState

Mode = Literal["agent", "context"]
Policy = Literal["ask", "auto-edit", "yolo"]
SandboxMode = Literal["auto", "require", "off"]
EmbeddingProvider = Literal["default", "minilm", "openai", "hash"]

DEFAULT_CONTEXT_WINDOW = 128_000


@dataclass(frozen=True, kw_only=True)
class Context:
    """Settings for one run of the engram graph."""

    project: str = field(
        default=".",
        metadata={"description": "Project root the agent works in (a folder path)."},
    )
    engram_home: str = field(
        default="~/.engram",
        metadata={"description": "Where engram keeps user-level data (memory, sessions, caches)."},
    )
    model: str = field(
        default="",
        metadata={
            "description": "Chat model id: a plain name for an OpenAI-compatible server "
            "(gpt-4.1-mini, deepseek-chat, qwen2.5-coder) or a provider-prefixed "
            "init_chat_model id (openai:gpt-4.1). Empty: ENGRAM_MODEL where the graph runs; "
            "with neither, only the context pack is built."
        },
    )
    base_url: str = field(
        default="",
        metadata={
            "description": "Base URL of an OpenAI-compatible endpoint (empty: "
            "ENGRAM_BASE_URL or OPENAI_BASE_URL where the graph runs, else OpenAI)."
        },
    )
    context_window: int = field(
        default=DEFAULT_CONTEXT_WINDOW,
        metadata={"description": "Model context window in tokens."},
    )
    max_output_tokens: int = field(
        default=4096,
        metadata={"description": "Upper bound on tokens the model may write per call."},
    )
    temperature: float = field(
        default=0.0, metadata={"description": "Sampling temperature for the chat model."}
    )
    mode: Mode = field(
        default="agent",
        metadata={
            "description": "agent: run the coding agent; context: stop after building the "
            "context pack and return it."
        },
    )
    max_steps: int = field(
        default=40,
        metadata={"description": "Maximum model calls in one task before the run stops."},
    )
    budget: int = field(
        default=0,
        metadata={"description": "Context-pack token budget; 0 derives it from the window."},
    )
    branch_timeout_ms: int = field(
        default=500,
        metadata={
            "description": (
                "Timeout of each parallel retrieval branch in milliseconds, once the branch "
                "has run in this process; a first call gets more to open the index."
            )
        },
    )
    rerank_files: bool = field(
        default=False,
        metadata={
            "description": (
                "Before the pack is filled, one call to the chat model re-ranks its top files "
                "(paths, names and reasons; off by default, needs a model)."
            )
        },
    )
    tool_timeout_s: float = field(
        default=60.0,
        metadata={"description": "Seconds one tool call may run before it fails with an error."},
    )
    embedding_provider: EmbeddingProvider = field(
        default="default",
        metadata={
            "description": "default: the shipped offline embedder (a static table distilled "
            "from all-MiniLM-L6-v2); minilm: the transformer itself (engram[minilm], slower); "
            "openai: an OpenAI-compatible /v1/embeddings endpoint; hash: deterministic test "
            "embedder."
        },
    )
    embedding_model: str = field(
        default="",
        metadata={"description": "Embedding model name for the openai provider."},
    )
    embedding_url: str = field(
        default="",
        metadata={"description": "Base URL of the embeddings endpoint for the openai provider."},
    )
    chroma_url: str = field(
        default="",
        metadata={"description": "URL of a Chroma server; empty uses the embedded index."},
    )
    auto_approve: bool = field(
        default=False,
        metadata={"description": "Skip the human confirmation of high-risk tasks."},
    )
    trust_project: bool = field(
        default=False,
        metadata={
            "description": "Follow what the project ships: its .engram/settings.toml "
            "(allowed and verify commands), .engram/mcp.json servers and rules files as "
            "instructions. Off: only what `engram trust` recorded for this exact content."
        },
    )
    policy: Policy = field(
        default="ask",
        metadata={
            "description": "Approval of file edits and commands: ask (every one), auto-edit "
            "(edits pass, commands ask), yolo (nothing asks). Commands allowed in a trusted "
            "project's .engram/settings.toml pass; high-risk tasks always ask."
        },
    )

    sandbox: SandboxMode = field(
        default="auto",
        metadata={
            "description": "OS sandbox for every command engram runs (commands, checks, MCP "
            "servers): auto (bubblewrap where it works, else approval alone guards), require "
            "(refuse commands without one), off. Sandboxed commands write only the project "
            "and a private /tmp, and leave no process behind."
        },
    )
    sandbox_network: bool = field(
        default=False,
        metadata={"description": "Let sandboxed commands reach the network (off: cut)."},
    )

    def __post_init__(self) -> None:
        """Read an empty string or null as "not set": the field keeps its default."""
        for f in fields(self):
            if getattr(self, f.name) in ("", None) and f.default is not dataclasses.MISSING:
                object.__setattr__(self, f.name, f.default)

    @property
    def project_path(self) -> Path:
        """Return the project root as an absolute, resolved path."""
        return Path(self.project).expanduser().resolve()

    @property
    def home_path(self) -> Path:
        """Return ENGRAM_HOME as an absolute path."""
        return Path(self.engram_home).expanduser().resolve()

    @property
    def state(self) -> ProjectState:
        """Return where engram keeps its own state of the project (under ENGRAM_HOME)."""
        return ProjectState(self.project_path, self.home_path)

    def replace(self, **changes: Any) -> Context:
        """Return a copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Context:
        """Build settings from ``ENGRAM_*`` variables (and OpenAI's), converting types.

        Args:
            env: The environment to read; ``os.environ`` when omitted.
            **overrides: Values that win over the environment (e.g. CLI flags, a run's
                context); ``None`` and empty strings mean "not set" and are ignored.

        Raises:
            ConfigError: A variable holds a value of the wrong type or outside its choices.
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(_env_name(f.name))
            if raw is None and f.name == "base_url":
                raw = env.get("OPENAI_BASE_URL")
            if raw is None or raw == "":
                continue
            values[f.name] = _convert(f, raw)
        values.update({k: v for k, v in overrides.items() if v not in (None, "")})
        context = cls(**values)
        context.validate()
        return context

    @classmethod
    def with_defaults(cls, defaults: Context) -> type[Context]:
        """Return the schema with ``defaults``' values as its field defaults.

        A server declares the result as its ``context_schema``: a run's context overrides any
        field, a field it leaves out or empty takes the server's value, and Studio's form
        shows the server's values.
        """
        schema = make_dataclass(
            cls.__name__,
            [
                (f.name, f.type, field(default=getattr(defaults, f.name), metadata=f.metadata))
                for f in fields(cls)
            ],
            bases=(cls,),
            frozen=True,
            kw_only=True,
            namespace={"__module__": cls.__module__, "__doc__": cls.__doc__},
        )
        return schema

    def check_runnable(self) -> None:
        """Check that a run can start with these settings, beyond their types.

        Raises:
            ConfigError: A value is out of range or the project folder does not exist.
        """
        self.validate()
        if not self.project_path.is_dir():
            raise ConfigError(
                f"the project folder {self.project!r} does not exist (resolved to "
                f"{self.project_path})",
                hint="set `project` in the run context (or ENGRAM_PROJECT where the graph "
                "runs) to the absolute path of an existing folder",
            )

    def validate(self) -> None:
        """Check value ranges that types alone cannot express.

        Raises:
            ConfigError: A value is out of range.
        """
        if self.context_window < 1024:
            raise ConfigError(
                f"context window {self.context_window} is too small",
                hint="set ENGRAM_CONTEXT_WINDOW to the model's window in tokens, e.g. 128000",
            )
        if self.mode not in get_args(Mode):
            raise ConfigError(f"unknown mode {self.mode!r}", hint="use 'agent' or 'context'")
        if self.policy not in get_args(Policy):
            raise ConfigError(
                f"unknown approval policy {self.policy!r}",
                hint=f"use one of {', '.join(get_args(Policy))}",
            )
        if self.sandbox not in get_args(SandboxMode):
            raise ConfigError(
                f"unknown sandbox setting {self.sandbox!r}",
                hint=f"use one of {', '.join(get_args(SandboxMode))}",
            )
        if self.base_url and not self.base_url.lower().startswith(("http://", "https://")):
            raise ConfigError(
                f"the model endpoint {self.base_url!r} is not an http(s) URL",
                hint="set ENGRAM_BASE_URL (or OPENAI_BASE_URL) to the server's URL, e.g. "
                "http://localhost:8000/v1",
            )
        if (
            self.budget < 0
            or self.branch_timeout_ms <= 0
            or self.max_steps <= 0
            or not self.tool_timeout_s > 0
        ):
            raise ConfigError("budget, branch and tool timeouts and max steps must be positive")


def _env_name(field_name: str) -> str:
    """Return the environment variable of a setting (``engram_home`` is ``ENGRAM_HOME``)."""
    return "ENGRAM_HOME" if field_name == "engram_home" else f"ENGRAM_{field_name.upper()}"


def _convert(f: dataclasses.Field[Any], raw: str) -> Any:
    """Convert one environment string to the type of field ``f``."""
    name = _env_name(f.name)
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    raw = raw.strip()
    try:
        if kind == "int":
            return int(raw.replace("_", "").replace(",", ""))
        if kind == "float":
            return float(raw)
        if kind == "bool":
            lowered = raw.lower()
            if lowered in ON_VALUES:
                return True
            if lowered in OFF_VALUES:
                return False
            raise ValueError(raw)
    except ValueError:
        raise ConfigError(
            f"{name}={raw!r} is not a valid {kind}",
            hint=f"set {name} to a {kind} value or unset it",
        ) from None
    choices = {
        "Mode": get_args(Mode),
        "EmbeddingProvider": get_args(EmbeddingProvider),
        "Policy": get_args(Policy),
    }.get(kind)
    if choices and raw not in choices:
        raise ConfigError(
            f"{name}={raw!r} is not one of {', '.join(choices)}",
            hint=f"set {name} to one of {', '.join(choices)}",
        )
    return raw
