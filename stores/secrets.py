"""Detect credentials in text so no memory write path ever stores one."""

from __future__ import annotations

import re

__all__ = ["SECRET_PATTERNS", "find_secret"]

# Each pattern names the kind of secret it finds; the first match wins. Provider key
# formats come first because they are unambiguous; the generic assignment forms last.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("Stripe key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}")),
    (
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ),
    ("bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/\-]{16,}=*", re.IGNORECASE)),
    (
        "URL with credentials",
        re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s/:@]+:[^\s/@]+@[^\s/]+", re.IGNORECASE),
    ),
    (
        "credential assignment",
        re.compile(
            r"(?<![A-Za-z])(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|client[_\-]?secret|access[_\-]?key"
            r"|auth[_\-]?token|access[_\-]?token|token|private[_\-]?key)"
            r"\s*[:=]\s*['\"]?[A-Za-z0-9/+_.\-]{12,}",
            re.IGNORECASE,
        ),
    ),
    (
        "password",
        re.compile(
            r"(?<![A-Za-z])(?:password|passwd|passphrase|pwd)\s*(?:[:=]\s*\S{3,}"
            r"|is\s+(?:['\"][^'\"]+['\"]|\S*[\d!@#$%^&*]\S*))",
            re.IGNORECASE,
        ),
    ),
    ("password", re.compile(r"(?:密码|口令|密钥|令牌|秘钥)\s*(?:是|为|[:：=])\s*\S{3,}")),
)


def find_secret(text: str) -> str | None:
    """Return the kind of secret found in ``text``, or None when it looks clean.

    Covers API keys of common providers, tokens, passwords in assignments or "password is X"
    phrases (English and Chinese), private-key blocks and URLs with embedded credentials.
    """
    for kind, pattern in SECRET_PATTERNS:
        if pattern.search(text):
            return kind
    return None
