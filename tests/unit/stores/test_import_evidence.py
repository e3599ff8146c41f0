"""Propagation from the text ranks' leading files to the project files they import."""

from __future__ import annotations

from pathlib import Path

from engram.stores.codeindex._import_evidence import import_features

FILES = {
    "src/tool/__init__.py": "",
    "src/tool/cli.py": (
        "import os\nimport tool.net\nfrom . import parse\nfrom .util.text import clean\n"
        "from tool.util import (\n    shell,\n)\n"
    ),
    "src/tool/parse.py": "import json\n",
    "src/tool/net.py": "",
    "src/tool/util/__init__.py": "",
    "src/tool/util/text.py": "",
    "src/tool/util/shell.py": "",
    "docs/os.py": "",
}


def test_the_leading_files_imports_get_the_score_and_the_reason(tmp_path: Path):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    scores, reasons = import_features(
        tmp_path, list(FILES), text_ranks={"bm25": ["src/tool/cli.py", "src/tool/parse.py"]}
    )
    assert set(scores) == {
        "src/tool/net.py",
        "src/tool/parse.py",
        "src/tool/util/text.py",
        "src/tool/util/shell.py",
    }
    assert "docs/os.py" not in scores  # `import os` is the standard library's
    assert reasons["src/tool/net.py"] == ["imported by src/tool/cli.py"]
    assert max(scores.values()) == 1.0


def test_no_seeds_no_scores(tmp_path: Path):
    assert import_features(tmp_path, ["a.py"], text_ranks={}) == ({}, {})
