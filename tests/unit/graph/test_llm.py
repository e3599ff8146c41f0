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
