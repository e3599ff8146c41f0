"""A forwarded command's end leaves the warm server clean, however the command ended.

Each scenario runs in its own interpreter: ``run_command`` puts the client's descriptors on 0, 1
and 2, which a test must not do to pytest's own process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SCENARIO = textwrap.dedent(
    """
    import gc, io, os, sys
    from engram.cli._serve_request import run_command

    MODE = sys.argv[1]
    read, write = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    settings = {"encoding": "utf-8", "errors": "strict", "line_buffering": False}
    request = {"argv": [], "cwd": os.getcwd(), "env": dict(os.environ),
               "streams": [settings, settings]}
    server_stdout = sys.stdout

    class Interrupted(io.TextIOWrapper):
        def flush(self):
            raise KeyboardInterrupt

    kept = []

    class Command:
        def main(self, args, prog_name, **extra):
            if MODE == "silent":  # returns without touching the client's streams
                return
            if MODE == "reads":  # takes the client's input, writes nothing
                sys.stdin.read()
                return
            print("LEAKED OUTPUT " * 10)  # stays in the writer's buffer
            if MODE == "ctrl-c":  # the Ctrl-C lands while the output is being flushed
                kept.append(sys.stdout)
                sys.stdout = Interrupted(sys.stdout.buffer, encoding="utf-8")
            else:  # the client went away: its pipe is closed
                os.close(read)

    announced = []
    try:
        code = run_command(
            Command(), request, [null, write, write], lambda: announced.append(os.getpid())
        )
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # the server logs "a client left"
        code = "gone"
    os.close(write)
    restored = sys.stdout is server_stdout and os.readlink("/proc/self/fd/1") != (
        os.readlink(f"/proc/self/fd/{null}")
    )
    gc.collect()  # a writer still holding the output would flush it now, onto fd 1
    print(f"code={code} restored={restored} announced={len(announced)}", flush=True)
    if MODE == "ctrl-c":
        os.set_blocking(read, False)
        try:
            got = os.read(read, 4096)
        except BlockingIOError:
            got = b""
        print("the client got", len(got), "bytes")
    """
)


@pytest.mark.parametrize("mode", ["ctrl-c", "client-gone"])
def test_a_command_ended_by_ctrl_c_or_a_gone_client_restores_the_server_and_drops_its_output(
    mode, tmp_path
):
    out = scenario(mode, tmp_path)
    assert "restored=True" in out, out
    assert "LEAKED OUTPUT" not in out  # never written onto the server's own stdout later
    if mode == "ctrl-c":  # interrupted before a byte was written: the client was never told
        assert "code=130" in out and "announced=0" in out and "the client got 0 bytes" in out
    else:  # told once, before the first write (which failed)
        assert "code=gone" in out and "announced=1" in out


@pytest.mark.parametrize(("mode", "told"), [("silent", 0), ("reads", 1)])
def test_the_client_is_told_before_its_input_is_read_and_only_then(mode, told, tmp_path):
    """Until told, a client whose server died may run the command itself."""
    assert f"code=0 restored=True announced={told}" in scenario(mode, tmp_path)


def scenario(mode: str, folder: Path) -> str:
    """Run SCENARIO in ``mode`` in its own interpreter; return what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", SCENARIO, mode],
        capture_output=True,
        cwd=folder,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()
