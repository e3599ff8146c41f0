"""The warm server's messages: length-prefixed JSON over a Unix socket, file descriptors alongside.

Standard library only (the client reads it before anything else loads). A conversation:

1. The client sends ``{"op": "run", "version", "argv", "prog_name", "cwd", "env",
   "streams"}`` (or ``{"op": "status"}`` / ``{"op": "stop"}``).
2. The server answers ``{"refused": reason}`` (another code version: the client runs the
   command itself) or ``{"accepted": true}`` (queued).
3. When the command is next, the server sends ``{"ready": true}``; the client answers
   ``{"streams": true}`` with its standard input, output and error attached (``SCM_RIGHTS``);
   the server sends ``{"started": true}`` and the command begins to write to them.
4. The server sends ``{"exit": code}`` when the command ends. While waiting, the client may
   send ``{"interrupt": true}`` (Ctrl-C), which the command sees as ``KeyboardInterrupt``.

A connection closed after ``started`` and before ``exit`` means the server died mid-command:
output may be partial, so the client says so and fails instead of running the command twice.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from typing import Any

HEADER = struct.Struct("!I")
MAX_MESSAGE = 4 * 1024 * 1024
"""Largest message accepted (an environment is a few kilobytes)."""
MAX_FDS = 3


class WireError(ConnectionError):
    """The other side closed the connection or sent something that is not a message."""


def send_message(
    sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None
) -> None:
    """Send ``message`` (and ``fds`` with its first byte)."""
    body = json.dumps(message, ensure_ascii=False).encode()
    data = HEADER.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [data], fds)
        data = data[sent:]
    if data:
        sock.sendall(data)


def receive_message(
    sock: socket.socket, *, with_fds: bool = False
) -> tuple[dict[str, Any], list[int]]:
    """Receive one message and the descriptors that came with it.

    Raises:
        WireError: The connection closed first, or the bytes are not a message.
    """
    fds: list[int] = []
    if with_fds:
        first, fds, _flags, _address = socket.recv_fds(sock, HEADER.size, MAX_FDS)
    else:
        first = sock.recv(HEADER.size)
    try:
        header = first + _read_exactly(sock, HEADER.size - len(first))
        (length,) = HEADER.unpack(header)
        if length > MAX_MESSAGE:
            raise WireError(f"message of {length} bytes refused")
        message = json.loads(_read_exactly(sock, length))
    except (WireError, ValueError) as exc:
        for fd in fds:
            _close(fd)
        raise WireError(str(exc)) from exc
    if not isinstance(message, dict):
        for fd in fds:
            _close(fd)
        raise WireError("a message must be a JSON object")
    return message, fds


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = sock.recv(min(size, 65536))
        if not chunk:
            raise WireError("connection closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
