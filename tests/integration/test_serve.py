"""``engram serve``: forwarded commands answer as in-process ones, and every way it can go wrong.

Real processes and sockets: each server here is an ``engram serve`` process started (and
stopped) by the test, in a temporary ENGRAM_HOME, with ``ENGRAM_SERVE`` on only for the
commands that should reach it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engram.cli._serve_paths import serve_paths
from engram.cli._serve_wire import receive_message, send_message

pytestmark = pytest.mark.integration

ENGRAM = str(Path(sys.executable).with_name("engram"))
START_TIMEOUT_S = 60.0

FILES = {
    "app/auth.py": (
        "def check_password(user, password):\n"
        '    """Compare the password with the stored hash."""\n'
        "    return hash_password(password) == user.password_hash\n\n\n"
        "def hash_password(password):\n"
        "    return str(sum(map(ord, password)))\n"
    ),
    "app/paths.py": (
        "from pathlib import Path\n\n\n"
        "def confine(root, raw):\n"
        '    """Resolve ``raw`` under ``root``; refuse paths that leave it."""\n'
        "    path = (Path(root) / raw).resolve()\n"
        "    if not path.is_relative_to(root):\n"
        "        raise ValueError(raw)\n"
        "    return path\n"
    ),
    "app/views.py": (
        "from app.auth import check_password\n\n\n"
        "def login(request):\n"
        "    return check_password(request.user, request.form['password'])\n"
    ),
}


FACTS = [
    ("passwords are hashed with hash_password in app/auth.py",),
    ("the login view lives in app/views.py",),
    ("--global", "prefer pathlib over os.path in every project"),
]
"""Facts saved in the warm home (``memory search`` and ``profile`` find them)."""


def make_project(root: Path) -> Path:
    """Write the small project (no git: its ranking has no history and no clock)."""
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def environ(home: Path, *, serve: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ENGRAM_SERVE"}
    env.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDING_PROVIDER="hash")
    if not serve:
        env["ENGRAM_SERVE"] = "off"
    return env


def engram(
    home: Path, *args: str, serve: bool = True, cwd: Path | None = None, **extra: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [ENGRAM, *args],
        env={**environ(home, serve=serve), **extra},
        cwd=cwd,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def status(home: Path) -> dict:
    """Ask the server of ``home`` for its status over the socket; {} when none answers."""
    path = serve_paths(home).socket
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(path))
            send_message(sock, {"op": "status"})
            return receive_message(sock)[0]
    except OSError:
        return {}


class Server:
    """An ``engram serve`` process of one ENGRAM_HOME, stopped at the end of the test."""

    def __init__(self, home: Path):
        self.home = home
        self.process = subprocess.Popen(
            [ENGRAM, "serve", "--idle", "120"],
            env=environ(home, serve=True),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not status(home):
            assert self.process.poll() is None, self.process.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """One indexed project and a server holding it (module-wide: starting one costs seconds)."""
    home = tmp_path_factory.mktemp("serve_home")
    project = make_project(tmp_path_factory.mktemp("serve_project"))
    built = engram(home, "index", str(project), serve=False)
    assert built.returncode == 0, built.stderr
    for fact in FACTS:
        saved = engram(home, "memory", "save", *fact, serve=False, cwd=project)
        assert saved.returncode == 0, saved.stderr
    server = Server(home)
    yield home, project, server
    server.stop()


def outcome(done: subprocess.CompletedProcess[bytes]) -> tuple[int, bytes, bytes]:
    return done.returncode, done.stdout, done.stderr


COMMANDS = [
    ("search", "check the password", "--json"),
    ("search", "check the password"),
    ("search", "--files", "confine paths", "--json"),
    ("search", "--files", "confine paths"),
    ("context", "fix the password check", "--budget", "2000", "--json"),
    ("context", "fix the password check", "--budget", "2000"),
    ("graph", "check_password", "--json"),
    ("search",),  # a usage error: exit 2, Click's message on stderr
    ("search", "x", "--mode", "nonsense"),
    ("slice", "check_password"),
    ("slice", "check_password", "--budget", "30", "--json"),
    ("slice", "no_such_function"),  # exit 1: engram's own error and hint
    ("slice", "check_password", "--budget", "0"),
    ("profile", "fix the password check"),
    ("profile", "fix the password check", "--json"),
    ("profile",),
    ("memory", "search", "password hash"),
    ("memory", "search", "pathlib", "--json", "-k", "1"),
    ("memory", "search", "the login view", "--no-dense"),
    ("memory", "search"),  # exit 2: engram's own "give a QUERY or --batch FILE"
    ("memory", "search", "x", "-k", "0"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_forwarded_commands_answer_exactly_as_in_process(warm, args):
    home, project, server = warm
    served_before = status(home)["commands"]
    for columns in ("120", "50"):
        here = engram(home, *args, serve=False, cwd=project, COLUMNS=columns)
        there = engram(home, *args, cwd=project, COLUMNS=columns)
        assert outcome(there) == outcome(here)
    assert status(home)["commands"] == served_before + 2  # both went to the server


def test_memory_search_through_the_server_finds_the_saved_facts(warm):
    """The equality above is not two empty answers: the server finds project and global facts."""
    home, project, _ = warm
    found = engram(home, "memory", "search", "password hash", "--json", cwd=project)
    assert found.returncode == 0, found.stderr
    assert b"hashed with hash_password" in found.stdout
    assert b"pathlib" in engram(home, "memory", "search", "pathlib", cwd=project).stdout


def test_a_batch_read_from_a_descriptor_of_the_client_answers_as_in_process(warm):
    """``--batch <(…)`` names the client's own descriptor: the client runs it itself."""
    home, project, _ = warm
    answers = []
    for serve in (False, True):
        read, write = os.pipe()
        os.write(write, b'{"query": "password hash"}\n')
        os.close(write)
        try:
            done = subprocess.run(
                [ENGRAM, "memory", "search", "--json", "--batch", f"/dev/fd/{read}"],
                env=environ(home, serve=serve),
                cwd=project,
                capture_output=True,
                stdin=subprocess.DEVNULL,
                pass_fds=(read,),
                timeout=120,
                check=False,
            )
        finally:
            os.close(read)
        answers.append(outcome(done))
    assert answers[0][0] == 0, answers[0]
    assert b"hashed with hash_password" in answers[0][1]
    assert answers[1] == answers[0]


def pending(fd: int) -> int:
    """Return how many bytes wait unread in the pipe ``fd`` reads from."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def test_a_command_held_by_a_reader_that_stopped_reading_does_not_hold_the_next(warm, tmp_path):
    """``engram … | less`` left open blocks the server's command; another terminal's is not kept."""
    home, project, _ = warm
    batch = tmp_path / "queries.jsonl"
    batch.write_text('{"query": "password hash"}\n' * 5000)
    read, write = os.pipe()  # nobody reads it: the command blocks once the pipe is full
    held = start_client(
        home, project, "memory", "search", "--json", "--batch", str(batch), stdout=write, serve=True
    )
    os.close(write)
    try:
        wait_for(
            lambda: pending(read) >= 60_000 or held.poll() is not None,  # noqa: B023
            "the held command never filled its pipe",
        )
        assert held.poll() is None  # still writing into the full pipe
        here = engram(home, "search", "check the password", "--json", serve=False, cwd=project)
        there = engram(home, "search", "check the password", "--json", cwd=project)
        assert outcome(there) == outcome(here)
    finally:
        held.kill()
        held.wait()
        os.close(read)


def test_two_clients_at_once_both_get_their_answer(warm):
    home, project, _ = warm
    jobs = [
        ("search", "hash the password", "--json", "--path", str(project)),
        ("context", "confine a path", "--budget", "1500", "--json", "--path", str(project)),
    ] * 3
    expected = {args: outcome(engram(home, *args, serve=False)) for args in set(jobs)}
    with ThreadPoolExecutor(len(jobs)) as pool:
        results = list(pool.map(lambda args: (args, outcome(engram(home, *args))), jobs))
    for args, result in results:
        assert result == expected[args]


def test_a_saved_file_is_found_by_search_within_a_second_or_two(warm):
    home, project, _ = warm
    engram(home, "search", "warm up", "--path", str(project))  # the server follows it now
    (project / "app" / "billing.py").write_text("def refund_invoice_quickly(invoice):\n    pass\n")
    written = time.monotonic()
    while time.monotonic() - written < 10:
        done = engram(home, "search", "refund_invoice_quickly", "--json", "--path", str(project))
        if b"app/billing.py" in done.stdout:
            break
    assert b"app/billing.py" in done.stdout
    assert b"changed since" not in done.stderr  # the index follows: no stale note
    assert time.monotonic() - written < 5


def test_the_relation_index_follows_a_saved_file_too(warm):
    """A new caller saved under the server's watch shows in ``engram graph`` through it."""
    home, project, _ = warm
    assert_graph_follows_a_saved_caller(home, project)


def test_a_project_only_engram_graph_opened_is_followed_too(tmp_path):
    """The watcher is the code index's: a server that only ever ran ``graph`` keeps one too."""
    home = tmp_path / "home"
    project = make_project(tmp_path / "project")
    assert engram(home, "index", str(project), serve=False).returncode == 0
    server = Server(home)
    try:
        assert_graph_follows_a_saved_caller(home, project)
    finally:
        server.stop()


def assert_graph_follows_a_saved_caller(home: Path, project: Path) -> None:
    engram(home, "graph", "check_password", "--json", cwd=project)  # kept and followed now
    caller = (
        "from app.auth import check_password\n\n\n"
        "def audit_login(user, password):\n    return check_password(user, password)\n"
    )
    started = written = time.monotonic()
    (project / "app" / "audit.py").write_text(caller)
    while time.monotonic() - started < 20:
        if time.monotonic() - written > 3:  # saved again: the watcher may have been starting
            (project / "app" / "audit.py").write_text(caller)
            written = time.monotonic()
        there = engram(home, "graph", "check_password", "--json", cwd=project)
        if b"audit_login" in there.stdout:
            break
        time.sleep(0.2)
    assert b"audit_login" in there.stdout, there.stdout
    here = engram(home, "graph", "check_password", "--json", serve=False, cwd=project)
    assert outcome(there) == outcome(here)


def test_a_project_replaced_on_disk_is_never_answered_from_the_old_index(warm, tmp_path):
    home, _, _ = warm
    project = make_project(tmp_path / "replaced")
    assert engram(home, "index", str(project), serve=False).returncode == 0
    assert b"app/auth.py" in engram(home, "search", "password", "--path", str(project)).stdout
    moved = tmp_path / "moved"
    project.rename(moved)
    gone = engram(home, "search", "password", "--path", str(project))
    assert outcome(gone) == outcome(
        engram(home, "search", "password", "--path", str(project), serve=False)
    )
    assert gone.returncode == 2
    assert str(project) not in status(home)["projects"]
    # another folder at the same path, indexed anew: answers come from its files only
    project.mkdir()
    (project / "other.py").write_text("def password_policy():\n    return 12\n")
    assert engram(home, "index", str(project), serve=False).returncode == 0
    fresh = engram(home, "search", "password", "--json", "--path", str(project))
    assert b"other.py" in fresh.stdout and b"app/auth.py" not in fresh.stdout
    shutil.rmtree(moved)


INTERRUPT_EXIT_S = 10.0
"""How soon a client must end after one Ctrl-C during a command on the server."""
BATCH_QUERIES = 200_000
"""Queries in the long batch: tens of seconds of searching, were it not interrupted."""


def start_client(home: Path, project: Path, *args: str, stdout: object, serve: bool):
    return subprocess.Popen(
        [ENGRAM, *args],
        env=environ(home, serve=serve),
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
    )


def interrupt_once(client: subprocess.Popen[bytes]) -> tuple[int, bytes, float]:
    """Send one SIGINT to ``client``; return its exit code, its stderr and how long it took."""
    client.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        _, err = client.communicate(timeout=INTERRUPT_EXIT_S * 3)
    except subprocess.TimeoutExpired:
        client.kill()  # its pipes stay open in the server: not read to their end
        client.wait()
        raise AssertionError("the client did not end after Ctrl-C") from None
    return client.returncode, err, time.monotonic() - sent


def wait_for(condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def opened_by(pid: int, path: Path) -> bool:
    """Return True when process ``pid`` has ``path`` open."""
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # closed since it was listed
            if os.readlink(fd) == str(path):
                return True
    return False


def test_one_ctrl_c_stops_a_long_command_on_the_server_and_the_server_goes_on(warm, tmp_path):
    """A batch of searches busy on the server: Ctrl-C ends it there as it would in-process."""
    home, project, server = warm
    batch = tmp_path / "queries.jsonl"
    batch.write_text(
        "".join(f'{{"id": {n}, "query": "password hash {n}"}}\n' for n in range(BATCH_QUERIES))
    )
    args = ("memory", "search", "-k", "1", "--batch", str(batch))
    answers = {}
    served_before = status(home)["commands"]
    for serve in (False, True):
        out = tmp_path / f"out-{serve}.jsonl"
        with out.open("wb") as sink:
            client = start_client(home, project, *args, stdout=sink, serve=serve)
            wait_for(lambda: out.stat().st_size > 0, "the batch never started")  # noqa: B023
            answers[serve] = interrupt_once(client)
        if serve:
            size = out.stat().st_size
            time.sleep(1.0)
            assert out.stat().st_size == size  # nothing more is written: the command stopped
            assert len(out.read_bytes().splitlines()) < BATCH_QUERIES
    (here_code, here_err, _), (there_code, there_err, took) = answers[False], answers[True]
    assert there_code == here_code == 130
    assert there_err == here_err
    assert took < INTERRUPT_EXIT_S
    assert status(home)["commands"] == served_before + 1  # it ran on the server
    after = ("memory", "search", "password hash", "--json")
    assert outcome(engram(home, *after, cwd=project)) == outcome(
        engram(home, *after, cwd=project, serve=False)
    )
    assert server.process.poll() is None


def test_one_ctrl_c_ends_a_command_the_server_blocks_in(warm, tmp_path):
    """A command blocked in a system call (reading a FIFO still open for writing) stops too."""
    home, project, server = warm
    fifo = tmp_path / "queries.fifo"
    os.mkfifo(fifo)
    client = start_client(
        home,
        project,
        "memory",
        "search",
        "--batch",
        str(fifo),
        stdout=subprocess.PIPE,
        serve=True,
    )
    writer = -1

    def reader_came() -> bool:
        nonlocal writer
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: nobody reads it yet
            return False
        return True

    try:
        wait_for(reader_came, "the batch file was never opened")
        os.write(writer, b'{"id": 1, "query": "password"}\n')  # and more may come: still open
        wait_for(lambda: opened_by(server.pid, fifo), "the server does not read it", 10.0)
        code, err, took = interrupt_once(client)
        assert (code, err) == (130, b"interrupted\n")
        assert took < INTERRUPT_EXIT_S
        wait_for(lambda: not opened_by(server.pid, fifo), "the server still reads", 5.0)
    finally:
        if writer >= 0:
            os.close(writer)
    assert (
        b"hashed with hash_password"
        in engram(home, "memory", "search", "password", cwd=project).stdout
    )
    assert server.process.poll() is None


def test_ctrl_c_stops_an_idle_server(tmp_path):
    """Only a client's late Ctrl-C is dropped: the server's own stops it, between commands too."""
    server = Server(tmp_path / "home")
    try:
        server.process.send_signal(signal.SIGINT)
        assert server.process.wait(timeout=10) == 0
        assert b"engram serve: stopped" in server.process.stderr.read()  # type: ignore[union-attr]
    finally:
        server.stop()


def test_a_server_of_other_code_is_refused_and_stops(tmp_path):
    server = Server(tmp_path / "home")
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(serve_paths(server.home).socket))
            send_message(
                sock, {"op": "run", "version": "0.0.0+old", "argv": ["search", "x"]}, [0, 1, 2]
            )
            assert receive_message(sock)[0]["refused"] == "version"
        server.process.wait(timeout=15)
    finally:
        server.stop()


@pytest.mark.parametrize(
    "argv",
    [["index", "."], ["run", "delete everything"], ["memory", "save", "x"], [], "search x", [1]],
)
def test_the_server_runs_only_the_commands_a_client_hands_over(tmp_path, argv):
    server = Server(tmp_path / "home")
    try:
        version = status(server.home)["version"]
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(str(serve_paths(server.home).socket))
            send_message(sock, {"op": "run", "version": version, "argv": argv})
            assert receive_message(sock)[0] == {"refused": "command", "version": version}
        assert status(server.home)["commands"] == 0
    finally:
        server.stop()


def killed_mid_command_home(tmp_path: Path) -> tuple[Path, Path, Server]:
    """A home with the project indexed and a fact saved, and a server of its own."""
    home = tmp_path / "home"
    project = make_project(tmp_path / "project")
    assert engram(home, "index", str(project), serve=False).returncode == 0
    assert engram(home, "memory", "save", *FACTS[0], serve=False, cwd=project).returncode == 0
    return home, project, Server(home)


def start_batch(home: Path, project: Path, batch: Path, *, stdout: object, serve: bool):
    """Start ``engram memory search --json --batch BATCH``."""
    args = ("memory", "search", "--json", "--batch", str(batch))
    return start_client(home, project, *args, stdout=stdout, serve=serve)


def batch_through_fifo(
    home: Path, project: Path, fifo: Path, *, serve: bool, kill: Server | None = None
):
    """Run ``memory search --batch FIFO``; kill the server ``kill`` while it waits on the FIFO."""
    client = start_batch(home, project, fifo, stdout=subprocess.PIPE, serve=serve)
    if kill is not None:  # the server's command runs (it has the client's stdout), waiting
        pid = kill.pid
        wait_for(lambda: os.readlink(f"/proc/{pid}/fd/1").startswith("pipe:"), "never started")
        os.kill(pid, signal.SIGKILL)
        # Gone before the batch is written: a reader still blocked in the dying server would
        # take the write, and the client's own run would wait for a batch that never comes.
        assert kill.process.wait(timeout=10) == -signal.SIGKILL
    deadline = time.monotonic() + 60
    while True:  # whoever runs it now opens the FIFO to read the batch
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:  # ENXIO: nobody reads it yet
            assert time.monotonic() < deadline, "the batch was never read"
            time.sleep(0.05)
    os.write(fd, b'{"query": "password hash"}\n')
    os.close(fd)
    out, err = client.communicate(timeout=120)
    return client.returncode, out, err


def test_a_server_killed_before_its_command_wrote_anything_is_run_by_the_client(tmp_path):
    home, project, server = killed_mid_command_home(tmp_path)
    fifo = tmp_path / "queries.fifo"
    os.mkfifo(fifo)
    try:
        here = batch_through_fifo(home, project, fifo, serve=False)
        there = batch_through_fifo(home, project, fifo, serve=True, kill=server)
        assert here[0] == 0 and b"hashed with hash_password" in here[1]
        assert there == here  # the same answer, run by the client itself
        wait_for(lambda: status(home).get("running"), "no new server was started")
    finally:
        server.stop()
        subprocess.run([ENGRAM, "serve", "--stop"], env=environ(home, serve=True), check=False)


def test_a_server_killed_after_its_command_wrote_is_reported_not_rerun(tmp_path):
    home, project, server = killed_mid_command_home(tmp_path)
    batch = tmp_path / "queries.jsonl"
    batch.write_text('{"query": "password hash"}\n' * 5000)
    read, write = os.pipe()  # nobody reads it: the command blocks once the pipe is full
    client = start_batch(home, project, batch, stdout=write, serve=True)
    os.close(write)
    try:
        wait_for(lambda: pending(read) >= 60_000, "the command never filled its pipe")
        os.kill(server.pid, signal.SIGKILL)
        _, err = client.communicate(timeout=60)
        assert client.returncode == 1
        assert b"the warm server stopped during this command" in err
    finally:
        client.kill()
        os.close(read)
        server.stop()


def test_a_hung_server_is_not_waited_for(tmp_path):
    home = tmp_path / "home"
    project = make_project(tmp_path / "project")
    server = Server(home)
    os.kill(server.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        done = engram(
            home, "search", "confine", "--mode", "exact", "--json", "--path", str(project)
        )
        assert done.returncode == 0 and b"app/paths.py" in done.stdout
        assert time.monotonic() - started < 30
    finally:
        os.kill(server.pid, signal.SIGCONT)
        server.stop()


def test_a_dead_servers_socket_is_replaced_by_a_new_server(tmp_path):
    home = tmp_path / "home"
    project = make_project(tmp_path / "project")
    server = Server(home)
    server.process.kill()
    server.process.wait()
    assert serve_paths(home).socket.exists()  # left behind
    done = engram(home, "search", "confine", "--mode", "exact", "--json", "--path", str(project))
    assert done.returncode == 0 and b"app/paths.py" in done.stdout  # answered in-process
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (found := status(home)):  # ...and a new server started in the background
        assert time.monotonic() < deadline
        time.sleep(0.1)
    try:
        assert found["pid"] != server.pid
    finally:
        assert engram(home, "serve", "--stop").returncode == 0


@pytest.mark.parametrize("unsafe", ["group-writable", "other-owner", "symlink"])
def test_an_unsafe_socket_folder_is_refused(tmp_path, unsafe):
    home = tmp_path / "home"
    project = make_project(tmp_path / "project")
    folder = serve_paths(home).folder
    if unsafe == "symlink":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        home.mkdir()
        folder.symlink_to(elsewhere)
    else:
        folder.mkdir(parents=True, mode=0o700)
        if unsafe == "group-writable":
            folder.chmod(0o770)
        else:
            os.chown(folder, 65534, 65534)
    socket_path = serve_paths(home).socket
    done = engram(home, "search", "confine", "--mode", "exact", "--json", "--path", str(project))
    assert done.returncode == 0 and b"app/paths.py" in done.stdout  # runs here instead
    assert b"not using the warm server" in done.stderr
    refused = engram(home, "serve", "--idle", "5")
    assert refused.returncode == 1 and b"cannot listen" in refused.stderr
    assert not socket_path.exists()


def test_serve_off_never_starts_a_server(tmp_path):
    home = tmp_path / "home"
    project = make_project(tmp_path / "project")
    done = engram(home, "search", "confine", "--mode", "exact", "--path", str(project), serve=False)
    assert done.returncode == 0
    time.sleep(0.5)
    assert not serve_paths(home).folder.exists()


def test_a_deep_engram_home_gets_a_short_private_socket_and_an_idle_server_stops(tmp_path):
    home = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5)
    paths = serve_paths(home)
    assert paths.socket.parent != paths.folder and len(str(paths.socket)) < 100
    started = time.monotonic()
    done = engram(home, "serve", "--idle", "2")
    assert done.returncode == 0, done.stderr
    assert str(paths.socket).encode() in done.stderr and b"idle for 2 s" in done.stderr
    assert time.monotonic() - started < 60
    assert (paths.socket.parent.stat().st_mode & 0o777) == 0o700
    assert not paths.socket.exists()


def on_a_terminal(home: Path, *args: str, serve: bool) -> tuple[int, bytes]:
    """Run engram with stdout and stderr on a 70-column pseudo-terminal, colours on."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 70, 0, 0))
    env = {
        k: v
        for k, v in environ(home, serve=serve).items()
        if k not in {"NO_COLOR", "COLUMNS", "LINES"}
    }
    env["TERM"] = "xterm-256color"
    process = subprocess.Popen(
        [ENGRAM, *args], env=env, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(timeout=60), b"".join(chunks)


def test_on_a_terminal_the_forwarded_output_has_the_same_colours_and_width(warm):
    home, project, _ = warm
    args = ("search", "check the password", "--path", str(project))
    here = on_a_terminal(home, *args, serve=False)
    there = on_a_terminal(home, *args, serve=True)
    assert there == here
    assert b"\x1b[" in here[1]  # colours: it was a terminal
    visible = re.sub(r"\x1b\[[0-9;]*m", "", here[1].decode())
    assert max(len(line) for line in visible.splitlines()) <= 70  # fitted to the terminal


def test_a_background_server_never_imports_from_the_folder_it_runs_in(tmp_path):
    """The server changes into each client's project: a module planted there is not imported."""
    from engram.cli._serve_client import server_argv

    hostile = tmp_path / "repo"
    hostile.mkdir()
    (hostile / "planted_module.py").write_text("raise SystemExit('the repository ran code')\n")
    python_and_flags = server_argv()[: server_argv().index("-c")]
    probe = (
        "import os, sys; os.chdir(sys.argv[1])\n"
        "try:\n    import planted_module\nexcept ModuleNotFoundError:\n    print('not imported')\n"
    )
    done = subprocess.run(
        [*python_and_flags, "-c", probe, str(hostile)],
        cwd=hostile,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "not imported", done.stderr
