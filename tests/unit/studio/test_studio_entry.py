"""The Studio entry: the server's environment becomes the form's defaults; docs and samples."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

from engram.graph import Context

REPO = Path(__file__).resolve().parents[3]
README_COMMAND = ".venv/bin/langgraph dev --port 8123 --no-browser"


def test_the_servers_environment_fills_what_a_run_leaves_out(monkeypatch, tmp_path):
    monkeypatch.setenv("ENGRAM_MODEL", "qwen2.5-coder")
    monkeypatch.setenv("ENGRAM_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("ENGRAM_PROJECT", str(tmp_path))
    graph = runpy.run_path(str(REPO / "studio" / "graph.py"))["graph"]
    form = graph.get_context_jsonschema()["properties"]
    assert form["model"]["default"] == "qwen2.5-coder"
    assert form["base_url"]["default"] == "http://127.0.0.1:11434/v1"
    assert form["project"]["default"] == str(tmp_path)
    schema = graph.builder.context_schema
    run = schema(**json.loads((REPO / "studio" / "sample_context.json").read_text("utf-8")))
    assert isinstance(run, Context)
    assert (run.model, run.base_url) == ("qwen2.5-coder", "http://127.0.0.1:11434/v1")
    assert run.project == "/path/to/your/project"


def test_samples_set_no_empty_value_that_would_hide_the_environment():
    sample = json.loads((REPO / "studio" / "sample_context.json").read_text("utf-8"))
    assert "" not in sample.values() and "model" not in sample and "base_url" not in sample
    graph_input = json.loads((REPO / "studio" / "sample_input.json").read_text("utf-8"))
    assert graph_input["messages"][0]["role"] == "user"


def test_docs_show_the_command_the_server_tests_run():
    from tests.support.servers import langgraph_dev_command

    for doc in (REPO / "README.md", REPO / "studio" / "README.md"):
        text = doc.read_text("utf-8")
        assert README_COMMAND in text, doc
        assert "--allow-blocking" not in text.replace("No `--allow-blocking`", ""), doc
    documented = README_COMMAND.split()[1:]
    tested = langgraph_dev_command(8123)[1:]
    assert tested[: len(documented)] == documented
    assert tested[len(documented) :] == ["--no-reload"]


def test_the_studio_graph_has_input_and_output_schemas(monkeypatch, tmp_path):
    monkeypatch.setenv("ENGRAM_PROJECT", str(tmp_path))
    graph = runpy.run_path(str(REPO / "studio" / "graph.py"))["graph"]
    inputs = graph.get_input_jsonschema()["properties"]
    outputs = graph.get_output_jsonschema()["properties"]
    assert "messages" in inputs
    assert {"messages", "context_pack", "code_hits", "budget", "outcome"} <= set(outputs)
