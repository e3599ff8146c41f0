"""Build the chat model for a run and read token usage (including cache hits) from replies."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engram.graph._context import Context
from engram.graph._errors import ConfigError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

MODEL_MAX_RETRIES = 4
"""Retries with exponential backoff on 429, 5xx, connection errors and timeouts."""
MODEL_TIMEOUT_S = 120.0
CACHE_FIELDS = (
    "cache_read",
    "cached_tokens",
    "prompt_cache_hit_tokens",
    "input_cache_hit_tokens",
    "cache_read_input_tokens",
)
OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "too many tokens",
    "prompt is too long",
    "input is too long",
)


def make_model(context: Context, env: Mapping[str, str] | None = None) -> BaseChatModel | None:
    """Return the chat model named by the run settings, or None when none is configured.

    A plain name (``gpt-4.1-mini``, ``deepseek-chat``, Ollama's ``qwen2.5-coder:7b``) talks to
    an OpenAI-compatible endpoint at ``context.base_url``; an id prefixed with a provider
    ``init_chat_model`` knows (``anthropic:claude-sonnet-4-5``) goes through it.

    Raises:
        ConfigError: The provider's package is missing, or ``init_chat_model`` refuses the id.
    """
    if not context.model:
        return None
    env = os.environ if env is None else env
    common: dict[str, Any] = {
        "temperature": context.temperature,
        "max_retries": MODEL_MAX_RETRIES,
        "timeout": MODEL_TIMEOUT_S,
    }
    provider, _, name = context.model.partition(":")
    if provider != "openai":
        if name and _is_provider(provider):
            return _provider_model(context.model, common)
        name = context.model  # no provider, or a tagged name (Ollama's qwen2.5-coder:7b)
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=name,
        base_url=context.base_url or None,
        api_key=env.get("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
        max_completion_tokens=context.max_output_tokens,
        stream_usage=True,
        **common,
    )


def _is_provider(prefix: str) -> bool:
    """Tell whether ``init_chat_model`` takes ``prefix:`` as a provider (as LangChain parses it)."""
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS
    except ImportError:  # a LangChain without that table: every prefix is a provider, as before
        return True
    return prefix in _BUILTIN_PROVIDERS


def _provider_model(model: str, settings: dict[str, Any]) -> BaseChatModel:
    """Return ``provider:name`` through ``init_chat_model``; a name it cannot use: ConfigError."""
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(model, **settings)  # type: ignore[no-any-return]
    except ImportError as exc:
        raise ConfigError(
            f"ENGRAM_MODEL={model!r} needs a package that is not installed ({exc})",
            hint="install that provider's LangChain package, or give a plain model name served "
            "by an OpenAI-compatible endpoint (ENGRAM_BASE_URL)",
        ) from exc
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"ENGRAM_MODEL={model!r} cannot be used: {first}",
            hint="write provider:model (e.g. openai:gpt-4.1, anthropic:claude-sonnet-4-5), or a "
            "plain model name for an OpenAI-compatible endpoint",
        ) from exc


def _first_int(mapping: Mapping[str, Any] | None, keys: tuple[str, ...]) -> int:
    if not mapping:
        return 0
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, int | float) and value:
            return int(value)
    for value in mapping.values():
        if isinstance(value, Mapping):
            found = _first_int(value, keys)
            if found:
                return found
    return 0


def usage_of(message: BaseMessage) -> dict[str, int]:
    """Return ``{input, output, cache_read, calls}`` for one model reply.

    Cache hits are read from every field providers use: LangChain's
    ``input_token_details.cache_read``, OpenAI's ``prompt_tokens_details.cached_tokens``,
    DeepSeek's ``prompt_cache_hit_tokens``, Moonshot/GLM ``input_cache_hit_tokens`` and
    Anthropic's ``cache_read_input_tokens``.
    """
    meta: Mapping[str, Any] = getattr(message, "usage_metadata", None) or {}
    response = getattr(message, "response_metadata", None) or {}
    raw_usage = response.get("token_usage") or response.get("usage") or {}
    input_tokens = int(meta.get("input_tokens") or raw_usage.get("prompt_tokens") or 0)
    output_tokens = int(meta.get("output_tokens") or raw_usage.get("completion_tokens") or 0)
    cache = _first_int(meta.get("input_token_details"), CACHE_FIELDS) or _first_int(
        raw_usage, CACHE_FIELDS
    )
    return {"input": input_tokens, "output": output_tokens, "cache_read": cache, "calls": 1}


def is_context_overflow(exc: BaseException) -> bool:
    """Return True when a provider error says the prompt exceeded the context window."""
    text = f"{getattr(exc, 'code', '')} {exc}".lower()
    return any(marker in text for marker in OVERFLOW_MARKERS)
