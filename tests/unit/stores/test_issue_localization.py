"""Reading issues and ranking files for them: the parser, the features, the shipped weights."""

from __future__ import annotations

import json
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.stores.codeindex._file_kinds import file_kind
from engram.stores.codeindex._issue_reading import _source_names, read_issue
from engram.stores.codeindex._localization import (
    FEATURES,
    WEIGHTS_FILE,
    ProjectFiles,
    Weights,
    default_weights,
    gather_evidence,
    rank_evidence,
)

ISSUE = """[Acme] ERROR: crash when `--write-comments` is used
<!-- Please fill the template below -->
- [x] I have searched the existing issues

Running with `AcmeExtractor` fails:

```
Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/tool/core.py", line 120, in run
    self.extract()
  File "/usr/lib/python3.12/site-packages/tool/extractor/acme.py", line 88, in _real_extract
    data = parse_page(page)
KeyError: 'video'
```

See https://github.com/org/tool/blob/0123abc/tool/utils/net.py#L10 and
`from tool.postprocessor import embed` for context.
"""

FILES = ProjectFiles.build(
    [
        ("tool/core.py", "function", "run(self)"),
        ("tool/extractor/acme.py", "class", "AcmeExtractor"),
        ("tool/extractor/acme.py", "method", "AcmeExtractor._real_extract(self, url)"),
        ("tool/extractor/other.py", "function", "parse_page(page)"),
        ("tool/utils/net.py", "file", "net.py"),
        ("tool/postprocessor/embed.py", "file", "embed.py"),
        ("tool/postprocessor/__init__.py", "file", "__init__.py"),
        ("tests/test_acme.py", "function", "test_acme()"),
        ("docs/acme.rst", "file", "acme.rst"),
        ("README.md", "file", "README.md"),
    ]
)


def test_the_template_is_dropped_and_the_parts_are_told_apart():
    signals = read_issue(ISSUE)
    assert signals.title.startswith("[Acme] ERROR")
    assert "searched the existing issues" not in signals.prose
    assert "fill the template" not in signals.prose
    # innermost frame first
    assert [f.path.rsplit("/", 1)[-1] for f in signals.frames] == ["acme.py", "core.py"]
    assert signals.frames[0].function == "_real_extract"
    assert "tool/utils/net.py" in signals.paths
    assert "tool.postprocessor.embed" in signals.modules
    assert "AcmeExtractor" in signals.identifiers
    assert signals.flags == ("--write-comments",)
    assert "KeyError" in signals.errors
    assert "acme" in signals.tags and "github" in signals.tags


def test_windows_paths_and_diffs_are_read():
    text = (
        'Crash\n  File "C:\\Python312\\Lib\\site-packages\\pkg\\mod.py", line 3, in f\n'
        "diff --git a/pkg/other.py b/pkg/other.py\n"
    )
    signals = read_issue(text)
    assert signals.frames[0].path.endswith("pkg\\mod.py")
    assert "pkg/other.py" in signals.paths


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("pkg/mod.py", "source"),
        ("tests/test_x.py", "test"),
        ("pkg/x_test.go", "test"),
        ("conftest.py", "test"),
        ("docs/index.rst", "docs"),
        ("CHANGES.md", "docs"),
        ("examples/demo.py", "example"),
        ("scripts/release.py", "script"),
        ("setup.py", "script"),
        ("pkg/data.json", "data"),
        ("third_party/lib/a.py", "vendored"),
        ("test-data/unit/fixtures/typing.pyi", "test"),
        ("pkg/unit_tests/a.py", "test"),
        ("pkg/typeshed/stdlib/ast.pyi", "stub"),
        ("types/index.d.ts", "stub"),
        ("pkg/contest.py", "source"),
        ("latest/mod.py", "source"),
        ("pkg/tests.py", "test"),
        ("pkg/tests-cookbook.py", "test"),
        ("pkg/test.py", "source"),
        ("pkg/testing.py", "source"),
        ("pkg/contests.py", "source"),
    ],
)
def test_file_kinds_come_from_the_path(path, kind):
    assert file_kind(path) == kind


def test_evidence_names_each_reason():
    evidence = gather_evidence(
        read_issue(ISSUE),
        FILES,
        text_ranks={"bm25": ["README.md"]},
        literal_hits={"--write-comments": ["tool/extractor/acme.py"]},
    )
    acme = evidence["tool/extractor/acme.py"]
    assert acme.frame == 1.0 and acme.definition > 0 and acme.stem > 0 and acme.literal == 1.0
    assert evidence["tool/core.py"].frame == 0.5
    assert evidence["tool/utils/net.py"].named == 1.0
    assert evidence["tool/postprocessor/embed.py"].module > 0.5  # the second module named
    assert evidence["README.md"].bm25 > 0
    assert any("traceback frame 1" in r for r in acme.reasons)


def test_ranking_prefers_source_unless_the_task_is_about_tests():
    evidence = gather_evidence(
        read_issue("acme is broken\n"),
        FILES,
        text_ranks={"bm25": ["tests/test_acme.py", "docs/acme.rst", "tool/extractor/acme.py"]},
    )
    weights = Weights(features={"bm25": 1.0}, kinds={"source": 0.0, "test": -1.0, "docs": -1.0})
    assert rank_evidence(evidence, weights)[0][0].path == "tool/extractor/acme.py"
    first = rank_evidence(evidence, weights, prefer=("source", "test"))[0][0].path
    assert first == "tests/test_acme.py"


def test_the_shipped_weights_load_and_cover_every_feature():
    weights = default_weights()
    assert set(weights.features) == set(FEATURES)
    assert weights.kinds["source"] == 0.0
    assert set(weights.kinds) >= {"test", "docs", "data", "example", "script", "vendored"}
    assert json.loads(WEIGHTS_FILE.read_text())["note"]  # says where the weights come from


def test_tasks_about_tests_or_docs_want_those_kinds_too():
    from engram.stores.codeindex import kinds_for_task

    assert kinds_for_task("bugfix") == ("source",)
    assert kinds_for_task(None) == ("source",)
    assert kinds_for_task("test") == ("source", "test")
    assert kinds_for_task("docs") == ("source", "docs")


def test_the_file_table_keeps_each_files_kind_and_groups_files_by_stem():
    assert FILES.kinds == {path: file_kind(path) for path in FILES.paths}
    groups = {stem: (words, paths) for stem, words, paths in FILES.stem_groups}
    # a generic stem is named after its folder; stems keep the order of their first file
    assert groups["postprocessor"] == (("postprocessor",), ("tool/postprocessor/__init__.py",))
    assert groups["acme"] == (("acme",), ("tool/extractor/acme.py", "docs/acme.rst"))
    assert groups["test_acme"][0] == ("test", "acme")
    assert [stem for stem, _, _ in FILES.stem_groups][:2] == ["core", "acme"]
    assert FILES.stem_groups is FILES.stem_groups  # built once per table


OLD_PATH_LINE = re.compile(
    r"([\w./\\-]*[\w-]+\.(?:py|pyi|pyx|js|jsx|ts|tsx|java|go|rs|c|h|cpp|rb))(?::(\d+))?\b"
)
"""The one-regex form of a source path in an issue, which backtracked on long runs."""


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(list("ab./\\-_: \n") + [".py", ".pyi", ".cpp", ".h", "é"])))
def test_source_names_are_the_ones_the_single_regex_found(parts):
    text = "".join(parts)
    assert list(_source_names(text)) == [m.group(1) for m in OLD_PATH_LINE.finditer(text)]


def test_an_issue_built_to_make_its_patterns_backtrack_is_read_at_once():
    # a hang guard: each took seconds to minutes before; no speed measurement
    started = time.monotonic()
    for text in ("a" * 20_000, "a-" * 10_000, "x" + "\n" * 20_000, "fix " + "a." * 10_000):
        read_issue(text)
    assert read_issue("see src/app/models.py:12 and lib\\util.ts").paths[:2] == (
        "src/app/models.py",
        "lib/util.ts",
    )
    assert time.monotonic() - started < 30
