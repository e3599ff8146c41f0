"""A real local HTTP server speaking the OpenAI chat-completions API, scripted for tests.

It validates histories like the real APIs (an assistant message with tool calls must be answered
by one tool message per call id before anything else; no orphan tool messages) and answers 400
otherwise, simulates prefix caching in ``prompt_tokens_details.cached_tokens``, streams with SSE
when asked, and records every request body.

Run standalone: ``python -m tests.support.openai_stub --port 8765 --script script.json``.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]
Script = list[Reply] | Callable[[dict[str, Any]], Reply]


def history_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Return the OpenAI message-rule violations of a request's ``messages``."""
    problems: list[str] = []
    pending: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                problems.append(
                    f"messages[{index}]: tool message {call_id!r} answers no pending call"
                )
            pending.discard(call_id)
            continue
        if pending:
            problems.append(f"messages[{index}]: tool calls {sorted(pending)} were not answered")
            pending = set()
        if role == "assistant":
            pending = {c["id"] for c in message.get("tool_calls") or []}
    if pending:
        problems.append(f"tool calls {sorted(pending)} were not answered")
    return problems


def _canonical(body: dict[str, Any]) -> str:
    return json.dumps(
        {"tools": body.get("tools"), "messages": body.get("messages")},
        sort_keys=True,
        ensure_ascii=False,
    )


class OpenAIStub:
    """Context manager running the stub on 127.0.0.1 in a background thread."""

    def __init__(
        self, script: Script, *, port: int = 0, validate: bool = True, delay_s: float = 0.0
    ) -> None:
        self.script = script
        self.validate = validate
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        self.rejected: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            index = len(self.requests) - 1
        if callable(self.script):
            return self.script(body)
        if index >= len(self.script):
            return {"content": "(script exhausted)"}
        return self.script[index]

    def cached_tokens(self, body: dict[str, Any]) -> int:
        """Tokens of the longest prefix shared with an earlier request (4 chars a token)."""
        text = _canonical(body)
        best = 0
        for earlier in self.requests[:-1]:
            other = _canonical(earlier)
            limit = min(len(text), len(other))
            n = 0
            while n < limit and text[n] == other[n]:
                n += 1
            best = max(best, n)
        return best // 4

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._json(
                    200, {"object": "list", "data": [{"id": "stub-model", "object": "model"}]}
                )

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                problems = history_problems(body.get("messages", [])) if stub.validate else []
                if problems:
                    with stub._lock:
                        stub.rejected.append(body)
                    self._json(
                        400,
                        {
                            "error": {
                                "message": "; ".join(problems),
                                "type": "invalid_request_error",
                                "code": "invalid_messages",
                            }
                        },
                    )
                    return
                with stub._lock:
                    stub.requests.append(body)
                reply = stub.next_reply(body)
                if stub.delay_s or reply.get("delay_s"):  # a slow endpoint, or one slow reply
                    time.sleep(float(reply.get("delay_s") or stub.delay_s))
                if "status" in reply:
                    self._json(
                        int(reply["status"]),
                        {"error": reply.get("error", {"message": "scripted error"})},
                    )
                    return
                usage = self._usage(body, reply)
                if body.get("stream"):
                    self._stream(body, reply, usage)
                else:
                    self._json(200, self._completion(body, reply, usage))

            def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
                prompt = len(_canonical(body)) // 4
                completion = max(1, len(json.dumps(reply)) // 4)
                usage = {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": stub.cached_tokens(body)},
                }
                usage.update(reply.get("usage") or {})
                return usage

            @staticmethod
            def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
                return [
                    {
                        "id": call.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": call.get("raw_arguments")
                            or json.dumps(call.get("args", {})),
                        },
                    }
                    for call in reply.get("tool_calls") or []
                ]

            def _completion(
                self, body: dict[str, Any], reply: Reply, usage: dict[str, Any]
            ) -> dict[str, Any]:
                calls = self._tool_calls(reply)
                message: dict[str, Any] = {
                    "role": "assistant",
                    "content": reply.get("content") or "",
                }
                if calls:
                    message["tool_calls"] = calls
                return {
                    "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "stub-model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "tool_calls" if calls else "stop",
                        }
                    ],
                    "usage": usage,
                }

            def _stream(self, body: dict[str, Any], reply: Reply, usage: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                base = {
                    "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "stub-model"),
                }

                def send(choices: list[dict[str, Any]], **extra: Any) -> None:
                    chunk = {**base, "choices": choices, **extra}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(float(reply.get("chunk_delay_s") or 0))  # a slow stream

                send([{"index": 0, "delta": {"role": "assistant", "content": ""}}])
                content = reply.get("content") or ""
                for start in range(0, len(content), 16):
                    send([{"index": 0, "delta": {"content": content[start : start + 16]}}])
                calls = self._tool_calls(reply)
                for index, call in enumerate(calls):
                    send(
                        [
                            {
                                "index": 0,
                                "delta": {
                                    "tool_calls": [
                                        {
                                            "index": index,
                                            "id": call["id"],
                                            "type": "function",
                                            "function": {
                                                "name": call["function"]["name"],
                                                "arguments": "",
                                            },
                                        }
                                    ]
                                },
                            }
                        ]
                    )
                    send(
                        [
                            {
                                "index": 0,
                                "delta": {
                                    "tool_calls": [
                                        {
                                            "index": index,
                                            "function": {
                                                "arguments": call["function"]["arguments"]
                                            },
                                        }
                                    ]
                                },
                            }
                        ]
                    )
                send(
                    [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}]
                )
                if (body.get("stream_options") or {}).get("include_usage"):
                    send([], usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", required=True, help="JSON file with a list of replies")
    parser.add_argument("--log", help="write received request bodies here (JSONL) on exit")
    args = parser.parse_args()
    with open(args.script, encoding="utf-8") as handle:
        script = json.load(handle)
    stub = OpenAIStub(script, port=args.port)
    with stub:
        print(f"listening on {stub.base_url}", flush=True)
        try:
            while True:
                time.sleep(0.2)
                if args.log:
                    with open(args.log, "w", encoding="utf-8") as out:
                        for body in stub.requests:
                            out.write(json.dumps(body) + "\n")
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
