from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from engram.graph import Context, is_context_overflow, usage_of
from engram.graph._llm import make_model


def test_usage_from_langchain_usage_metadata():
    message = AIMessage(
        content="x",
        usage_metadata={
            "input_tokens": 100,
            "output_tokens": 7,
            "total_tokens": 107,
            "input_token_details": {"cache_read": 64},
        },
    )
    assert usage_of(message) == {"input": 100, "output": 7, "cache_read": 64, "calls": 1}


@pytest.mark.parametrize(
    "usage",
    [
        {
            "prompt_tokens": 50,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 32},
        },
        {"prompt_tokens": 50, "completion_tokens": 5, "prompt_cache_hit_tokens": 32},
        {"prompt_tokens": 50, "completion_tokens": 5, "input_cache_hit_tokens": 32},
        {"prompt_tokens": 50, "completion_tokens": 5, "cache_read_input_tokens": 32},
    ],
)
def test_cache_hits_from_every_provider_field(usage):
    message = AIMessage(content="x", response_metadata={"token_usage": usage})
    assert usage_of(message) == {"input": 50, "output": 5, "cache_read": 32, "calls": 1}


def test_no_usage_reported():
    assert usage_of(AIMessage(content="x")) == {
        "input": 0,
        "output": 0,
        "cache_read": 0,
        "calls": 1,
    }


def test_make_model_none_without_model():
    assert make_model(Context()) is None


def test_make_model_openai_compatible():
    model = make_model(
        Context(model="qwen2.5-coder", base_url="http://127.0.0.1:9/v1"),
        env={"OPENAI_API_KEY": "k"},
    )
    assert model is not None
    assert model.model_name == "qwen2.5-coder"  # type: ignore[attr-defined]
    assert str(model.openai_api_base) == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]
    assert model.max_retries >= 3  # type: ignore[attr-defined]


def test_make_model_provider_prefixed_openai():
    model = make_model(Context(model="openai:gpt-4.1"), env={"OPENAI_API_KEY": "k"})
    assert model.model_name == "gpt-4.1"  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["qwen2.5-coder:7b", "llama3.1:8b", "mistral:7b", "qwen:7b"])
def test_a_tagged_model_name_is_not_read_as_a_provider(name: str):
    # Ollama and llama.cpp servers name models name:tag; only known providers are prefixes
    model = make_model(
        Context(model=name, base_url="http://127.0.0.1:11434/v1"), env={"OPENAI_API_KEY": "k"}
    )
    assert model.model_name == name  # type: ignore[union-attr]


def test_a_provider_that_cannot_be_used_is_a_config_error(monkeypatch):
    import langchain.chat_models

    from engram.graph import ConfigError

    def missing(model: str, **settings):
        raise ImportError("Initializing ChatAnthropic requires the langchain-anthropic package")

    monkeypatch.setattr(langchain.chat_models, "init_chat_model", missing)
    with pytest.raises(ConfigError, match="needs a package that is not installed") as raised:
        make_model(Context(model="anthropic:claude-sonnet-4-5"))
    assert "install that provider" in raised.value.hint

    def refused(model: str, **settings):
        raise ValueError("Unsupported model\nmore lines")

    monkeypatch.setattr(langchain.chat_models, "init_chat_model", refused)
    with pytest.raises(ConfigError, match="cannot be used: Unsupported model$"):
        make_model(Context(model="groq:nothing"))


def test_an_endpoint_that_is_not_an_http_url_is_refused():
    from engram.graph import ConfigError

    with pytest.raises(ConfigError, match="not an http"):
        Context.from_env(env={"ENGRAM_BASE_URL": "localhost:8000/v1"})
    assert Context.from_env(env={"OPENAI_BASE_URL": "HTTPS://h/v1"}).base_url == "HTTPS://h/v1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Error code: 400 - This model's maximum context length is 128000 tokens", True),
        ("context_length_exceeded", True),
        ("rate limit", False),
    ],
)
def test_context_overflow_detection(text, expected):
    assert is_context_overflow(RuntimeError(text)) is expected
