from __future__ import annotations

from dataclasses import asdict

import pytest

from engram.graph import ConfigError, Context


def test_defaults_are_usable():
    context = Context()
    assert context.mode == "agent"
    assert context.context_window == 128_000
    assert context.branch_timeout_ms == 500


def test_from_env_converts_types():
    context = Context.from_env(
        {
            "ENGRAM_MODEL": "deepseek-chat",
            "ENGRAM_BASE_URL": "http://localhost:9/v1",
            "ENGRAM_CONTEXT_WINDOW": "200_000",
            "ENGRAM_TEMPERATURE": "0.5",
            "ENGRAM_AUTO_APPROVE": "yes",
            "ENGRAM_MODE": "context",
            "ENGRAM_PROJECT": "/tmp",
            "ENGRAM_HOME": "/tmp/home",
        }
    )
    assert context.model == "deepseek-chat"
    assert context.base_url == "http://localhost:9/v1"
    assert context.context_window == 200_000
    assert context.temperature == 0.5
    assert context.auto_approve is True
    assert context.mode == "context"
    assert context.project == "/tmp"
    assert context.engram_home == "/tmp/home"


def test_openai_base_url_is_a_fallback():
    assert Context.from_env({"OPENAI_BASE_URL": "http://a/v1"}).base_url == "http://a/v1"
    both = {"OPENAI_BASE_URL": "http://a/v1", "ENGRAM_BASE_URL": "http://b/v1"}
    assert Context.from_env(both).base_url == "http://b/v1"


def test_overrides_win_and_none_is_ignored():
    context = Context.from_env({"ENGRAM_MODEL": "a"}, model="b", project=None)
    assert context.model == "b"
    assert context.project == "."


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("ENGRAM_CONTEXT_WINDOW", "abc", "ENGRAM_CONTEXT_WINDOW"),
        ("ENGRAM_CONTEXT_WINDOW", "12", "too small"),
        ("ENGRAM_TEMPERATURE", "hot", "ENGRAM_TEMPERATURE"),
        ("ENGRAM_AUTO_APPROVE", "maybe", "ENGRAM_AUTO_APPROVE"),
        ("ENGRAM_MODE", "turbo", "ENGRAM_MODE"),
        ("ENGRAM_BRANCH_TIMEOUT_MS", "-5", "positive"),
    ],
)
def test_bad_values_raise_clear_errors(name, value, fragment):
    with pytest.raises(ConfigError) as info:
        Context.from_env({name: value})
    assert fragment in str(info.value)


def test_every_field_has_a_description():
    from dataclasses import fields

    for f in fields(Context):
        assert f.metadata.get("description"), f.name


def test_context_is_frozen():
    with pytest.raises(AttributeError):
        Context().model = "x"  # type: ignore[misc]


def test_empty_strings_and_nulls_mean_not_set():
    assert Context(project="", engram_home="", model="", base_url=None) == Context()


def test_with_defaults_makes_the_servers_values_the_defaults():
    server = Context.from_env(
        {
            "ENGRAM_MODEL": "qwen",
            "ENGRAM_BASE_URL": "http://h/v1",
            "ENGRAM_HOME": "/srv/engram",
            "ENGRAM_CONTEXT_WINDOW": "64000",
        }
    )
    schema = Context.with_defaults(server)
    assert asdict(schema()) == asdict(server)
    assert asdict(schema(model="", base_url="", engram_home="")) == asdict(server)
    run = schema(model="gpt-4.1-mini", context_window=32000)
    assert (run.model, run.base_url, run.context_window) == ("gpt-4.1-mini", "http://h/v1", 32000)
    assert isinstance(run, Context) and schema.__name__ == "Context"
    assert Context().model == ""  # the shared schema keeps its own defaults


def test_with_defaults_renders_a_form_with_the_servers_values():
    from pydantic import TypeAdapter

    schema = Context.with_defaults(Context(model="qwen", engram_home="/srv/engram"))
    properties = TypeAdapter(schema).json_schema()["properties"]
    assert properties["model"]["default"] == "qwen"
    assert properties["engram_home"]["default"] == "/srv/engram"
    assert properties["mode"]["enum"] == ["agent", "context"]
    assert properties["model"]["description"].startswith("Chat model id")


def test_check_runnable_refuses_a_missing_project(tmp_path):
    Context(project=str(tmp_path)).check_runnable()
    with pytest.raises(ConfigError, match="does not exist") as caught:
        Context(project="/path/to/your/project").check_runnable()
    assert "`project`" in caught.value.hint
    with pytest.raises(ConfigError, match="does not exist"):
        Context(project=str(tmp_path / "missing")).check_runnable()
    with pytest.raises(ConfigError, match="too small"):
        Context(project=str(tmp_path), context_window=10).check_runnable()
