"""engram installs and imports as ``engram.…`` only: host apps and ``langgraph dev`` coexist.

A wheel is built from the repository and installed (without dependencies, which come from the
test's own environment) into a fresh venv; a host app with its own ``graph.py``, ``nodes.py``
and ``stores/`` then imports both its modules and engram's. ``langgraph dev``'s way of loading
``studio/graph.py`` (working folder appended to ``sys.path``, the file loaded by path) must not
load any engram file twice under two names.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, **kw)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Built from a copy: setuptools leaves build/ and engram.egg-info/ beside the sources, and a
    # stale egg-info in the checkout would be read as engram's metadata from its root.
    source = tmp_path_factory.mktemp("source") / "engram"
    tracked = _run(["git", "ls-files", "-z"], cwd=ROOT).stdout.split("\0")
    for name in filter(None, tracked):
        origin, copy = ROOT / name, source / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            copy.symlink_to(os.readlink(origin))
        elif origin.is_file():
            shutil.copy2(origin, copy)
    out = tmp_path_factory.mktemp("dist")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        cwd=out,
    )
    (built,) = out.glob("engram-*.whl")
    return built


def test_the_wheel_holds_only_the_engram_package(wheel: Path) -> None:
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"engram"}
    assert "engram/builder.py" in names and "engram/cli/entry.py" in names
    assert "engram/stores/codeindex/localizer_weights.json" in names and "engram/py.typed" in names
    for shipped in ("table.npy", "tokenizer.json", "NOTICE"):  # the default embedder, ready to run
        assert f"engram/stores/embeddings/static_minilm/{shipped}" in names
    assert not any(name.startswith("engram/studio/") for name in names)  # the repository's entry
    assert not any("__pycache__" in name for name in names)


def test_a_host_app_with_its_own_graph_nodes_and_stores_imports_engram(
    wheel: Path, tmp_path: Path
) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
        ).stdout.strip()
    )
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        cwd=tmp_path,
    )
    # engram's dependencies come from this test's environment (plain path entry: no .pth files of
    # that environment run, so the editable engram of the checkout stays out of sight).
    (site / "engram_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    host = tmp_path / "host"
    (host / "stores").mkdir(parents=True)
    (host / "graph.py").write_text("WHO = 'host graph'\n")
    (host / "nodes.py").write_text("WHO = 'host nodes'\n")
    (host / "stores" / "__init__.py").write_text("WHO = 'host stores'\n")
    (host / "app.py").write_text(
        textwrap.dedent("""
        import json
        import graph, nodes, stores
        import engram
        from engram.builder import build_graph
        from engram.graph.deps import Deps
        from engram.stores.codeindex import ProjectCodeIndex

        compiled = build_graph(Deps())
        print(json.dumps({
            "host": [graph.WHO, nodes.WHO, stores.WHO],
            "engram": engram.__file__,
            "nodes": sorted(compiled.get_graph().nodes),
            "index": ProjectCodeIndex.__module__,
        }))
    """)
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = _run([str(python), "app.py"], cwd=host, env=env)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["host"] == ["host graph", "host nodes", "host stores"]
    assert result["engram"].startswith(str(env_dir))
    assert {"load_rules", "pack_context", "call_model"} <= set(result["nodes"])
    assert result["index"] == "engram.stores.codeindex.code_index"

    # The README's library example, run from the host app's folder by the installed wheel.
    shutil.copy(ROOT / "examples" / "build_context.py", host / "build_context.py")
    (host / "calc.py").write_text("def add_numbers(a, b):\n    return a + b\n")
    done = _run(
        [str(python), "build_context.py", ".", "where is add_numbers defined?", "1000"],
        cwd=host,
        env={**env, "ENGRAM_HOME": str(tmp_path / "home")},
    )
    assert "slice calc.py:1-2 add_numbers(a, b)" in done.stdout, done.stdout
    assert "def add_numbers(a, b):" in done.stdout


def test_langgraph_dev_style_loading_imports_each_file_once(tmp_path: Path) -> None:
    probe = textwrap.dedent(f"""
        import importlib.util, json, os, sys
        root = {str(ROOT)!r}
        os.chdir(root)
        sys.path.append(root)  # what `langgraph dev` does with its working folder
        spec = importlib.util.spec_from_file_location("studio__graph", "studio/graph.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["studio__graph"] = module
        spec.loader.exec_module(module)
        import engram.cli.app, engram.cli.mcp_server  # the rest of the package
        seen = {{}}
        for name, mod in list(sys.modules.items()):
            path = getattr(mod, "__file__", None)
            folders = tuple(os.path.join(root, f) + os.sep for f in ("engram", "studio"))
            if path and os.path.realpath(path).startswith(folders):
                seen.setdefault(os.path.realpath(path), []).append(name)
        print(json.dumps({{p: n for p, n in seen.items() if len(n) > 1}}))
        print(json.dumps(sorted(n for names in seen.values() for n in names
                                if n.split(".")[0] in ("graph", "nodes", "stores", "cli", "api"))))
    """)
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path)}
    done = _run([sys.executable, "-c", probe], cwd=tmp_path, env=env)
    twice, bare = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    assert twice == {}
    assert bare == []
