"""Read the rules-file hierarchy (ENGRAM.md, AGENTS.md, CLAUDE.md) within a character cap."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engram.stores.files import confine, read_regular

RULES_MAX_CHARS = 24_000
"""Total characters of rules text injected into the system prompt."""
MAX_UTF8_BYTES = 4
"""Most bytes one character takes in UTF-8: a rules file is read no further than its share
of the cap could need (a file of gigabytes costs kilobytes; its length is then its size)."""
ENGRAM_RULES = (".engram/ENGRAM.md", ".engram/ENGRAM.local.md")
"""The only files inside the project's protected ``.engram/`` folder that are rules."""


@dataclass(frozen=True)
class RulesFile:
    """One rules file that was read."""

    path: str
    chars: int
    included_chars: int


@dataclass(frozen=True)
class RulesText:
    """The combined rules text and a report of what went in."""

    text: str
    files: tuple[RulesFile, ...]
    truncated: bool
    total_chars: int


def rules_candidates(project: Path, home: Path) -> list[Path]:
    """Return rules-file paths in injection order: user, project, local variants, interop."""
    return [
        home / "ENGRAM.md",
        project / "ENGRAM.md",
        project / ".engram" / "ENGRAM.md",
        home / "ENGRAM.local.md",
        project / "ENGRAM.local.md",
        project / ".engram" / "ENGRAM.local.md",
        project / "AGENTS.md",
        project / "CLAUDE.md",
    ]


def load_rules_files(
    project: Path, home: Path, *, project_rules: bool, max_chars: int = RULES_MAX_CHARS
) -> RulesText:
    """Concatenate existing rules files, each under a heading naming its source.

    The project's own files count only with ``project_rules`` (a trusted project); the user's
    files under ``home`` always do. Files beyond the cap are cut (the earlier, broader files
    win) and the cut is reported. No file is read past what the cap could use.
    """
    parts: list[str] = []
    files: list[RulesFile] = []
    used = 0
    total = 0
    seen: set[Path] = set()
    for candidate in rules_candidates(project, home):
        if not project_rules and not candidate.is_relative_to(home):
            continue
        try:
            resolved = _resolve(candidate, project)
            if resolved in seen or not resolved.is_file():
                continue
            seen.add(resolved)
            limit = max_chars * MAX_UTF8_BYTES + 1  # more than fits, however it decodes
            raw = read_regular(resolved, max_bytes=limit)
            size = resolved.stat().st_size if len(raw) == limit else len(raw)
        except OSError:  # missing, refused by the project policy, not a regular file
            continue
        body = raw.decode("utf-8", errors="replace").strip()
        if not body:
            continue
        length = len(body) if len(raw) < limit else max(size, len(body))  # a huge file: bytes
        total += length
        label = _label(candidate, project, home)
        room = max(0, max_chars - used)
        kept = body[:room]
        if kept:
            parts.append(f"## {label}\n{kept}")
            used += len(kept)
        files.append(RulesFile(label, length, len(kept)))
    return RulesText("\n\n".join(parts), tuple(files), total > used, total)


def _resolve(candidate: Path, project: Path) -> Path:
    """Resolve a rules file; one in the project must pass the project's access policy.

    Raises:
        OSError: The file is refused (a symlink out of the project or to a secrets file).
    """
    if candidate.parent not in (project, project / ".engram"):
        return candidate.resolve()
    root = project.resolve()
    return confine(root, str(candidate.relative_to(project)), allowed=ENGRAM_RULES)


def _label(path: Path, project: Path, home: Path) -> str:
    for base, prefix in ((project, ""), (home, "~engram/")):
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)
