"""``engram doctor`` checks the model endpoint run and chat would call (one GET /models)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from engram.cli._doctor_command import model_health
from engram.graph import Context
from tests.support.engram_cli import run_engram
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration


class _Refusing(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return

    def do_GET(self) -> None:
        body = json.dumps({"error": {"message": "Incorrect API key provided"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_the_model_check_tells_each_case_apart():
    assert model_health(Context(model="")).status == "missing"
    with OpenAIStub([]) as stub:
        listed = model_health(Context(model="stub-model", base_url=stub.base_url), env={})
        other = model_health(Context(model="gpt-9", base_url=stub.base_url), env={})
    assert (listed.status, listed.detail) == ("ok", "stub-model: listed")
    assert other.status == "ok" and "not among its 1 listed models" in other.detail
    down = model_health(Context(model="stub-model", base_url="http://127.0.0.1:9/v1"), env={})
    assert down.status == "broken" and "cannot reach the model endpoint" in down.detail
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        refused = model_health(Context(model="m", base_url=url), env={"OPENAI_API_KEY": "sk-x"})
    finally:
        server.shutdown()
    assert refused.status == "broken" and "refused the API key (HTTP 401)" in refused.detail


def test_doctor_fails_while_the_configured_endpoint_is_down(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    home = tmp_path / "home"
    down = run_engram(project, home, "http://127.0.0.1:9/v1", "doctor", "--json")
    rows = {row["store"]: row for row in json.loads(down.stdout)}
    assert down.returncode == 1 and rows["model"]["status"] == "broken"
    with OpenAIStub([]) as stub:
        up = run_engram(project, home, stub.base_url, "doctor", "--json")
    rows = {row["store"]: row for row in json.loads(up.stdout)}
    assert up.returncode == 0, up.stdout
    assert rows["model"]["detail"] == "stub-model: listed"
