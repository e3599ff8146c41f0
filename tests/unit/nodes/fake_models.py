"""Fake chat models for compaction tests (kept beside the node tests that use them)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult


class RecordingChatModel(FakeMessagesListChatModel):
    """Replies from a list and records every request; ``bind_tools`` returns itself."""

    seen: list[list[BaseMessage]] = []
    fail_with: str = ""

    def bind_tools(self, tools: Any, **kwargs: Any) -> RecordingChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        if self.fail_with:
            raise RuntimeError(self.fail_with)
        return super()._generate(messages, *args, **kwargs)
