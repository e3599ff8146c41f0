"""Detect credentials in text so no memory write path ever stores one.

Two layers, the way well-kept scanners (detect-secrets, gitleaks) work: provider formats that
are unambiguous on their own (``sk-ant-…``, ``ghp_…``, ``SG.….…``, webhook URLs), then a
keyword-and-entropy rule for everything else — a value next to a word such as *key*,
*token*, *secret* or *password* is a secret when it looks random (mixed character classes,
high Shannon entropy, no placeholder words). Random-looking values with no keyword nearby
(commit hashes, lockfile checksums, UUIDs, base64 images) are left alone on purpose.
"""

from __future__ import annotations

import base64
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping

from engram.stores._scan_text import Squeezed, scan_pieces

# Each pattern names the kind of secret it finds; the first match wins.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, flags))
    for kind, pattern, flags in (
        ("private key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----", 0),
        ("private key", r"PuTTY-User-Key-File-\d{1,2}:", 0),
        ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0),
        ("OpenAI API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", 0),
        ("Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}", 0),
        ("AWS access key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", 0),
        ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})", 0),
        ("GitLab token", r"\bgl(?:pat|ptt|dt|rt|cbt|soat|ft)-[A-Za-z0-9_\-]{20,}", 0),
        ("Slack token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}", 0),
        ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}", 0),
        ("Google OAuth token", r"\bya29\.[0-9A-Za-z_\-]{20,}|\bGOCSPX-[0-9A-Za-z_\-]{20,}", 0),
        ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}", 0),
        ("npm token", r"\bnpm_[A-Za-z0-9]{36}", 0),
        ("PyPI token", r"\bpypi-AgE[A-Za-z0-9_\-]{40,}", 0),
        ("SendGrid key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", 0),
        ("Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b", 0),
        (
            "Slack webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,}",
            0,
        ),
        (
            "Discord webhook",
            r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{20,}",
            0,
        ),
        ("Teams webhook", r"https://[\w.\-]+\.webhook\.office\.com/webhook\w*/[\w@/\-]{20,}", 0),
        ("Twilio key", r"\bSK[0-9a-f]{32}\b", 0),
        ("Mailgun key", r"\bkey-[0-9a-f]{32}\b", 0),
        ("Mailchimp key", r"\b[0-9a-f]{32}-us\d{1,2}\b", 0),
        ("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", 0),
        ("DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", 0),
        ("Vault token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", 0),
        ("Databricks token", r"\bdapi[a-f0-9]{32}\b", 0),
        ("Docker Hub token", r"\bdckr_pat_[A-Za-z0-9_\-]{20,}", 0),
        ("Atlassian token", r"\bATATT3[A-Za-z0-9_=\-]{50,}|\bATBB[A-Za-z0-9]{28,}", 0),
        ("Linear key", r"\blin_api_[A-Za-z0-9]{32,}", 0),
        ("Notion token", r"\b(?:secret|ntn)_[A-Za-z0-9]{40,}", 0),
        ("Grafana token", r"\bgl(?:c|sa)_[A-Za-z0-9_=\-+/]{30,}", 0),
        ("New Relic key", r"\bNRAK-[A-Z0-9]{27}\b", 0),
        ("Postman key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", 0),
        ("Figma token", r"\bfigd_[A-Za-z0-9_\-]{30,}", 0),
        ("Pulumi token", r"\bpul-[a-f0-9]{40}\b", 0),
        ("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{40,}", 0),
        ("age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}", 0),
        ("LLM provider key", r"\b(?:gsk|r8|xai|pplx)[_\-][A-Za-z0-9]{30,}", 0),
        ("Alibaba Cloud key", r"\bLTAI[A-Za-z0-9]{12,20}\b", 0),
        ("Mapbox token", r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}", 0),
        ("Sentry DSN", r"https://[0-9a-f]{32}@[\w.\-]*sentry\.io/\d+", 0),
        (
            "JSON web token",
            r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
            0,
        ),
        (
            "bearer token",
            # after a space, a "\\" line end, or a literal closed and the next one opened
            # (``"Bearer "`` then ``"…"`` below it, or after ``+``)
            r"\bBearer(?:\s+(?:\\\s+)?|\s*[\"']\s*[\\+]?\s*[bBrRuUfF]{0,2}[\"'])"
            r"[A-Za-z0-9._~+/\-]{16,}=*",
            re.IGNORECASE,
        ),
        (
            "basic credentials",
            r"\b(?:Authorization|auth)\W{0,5}Basic\s+(?:\\\s+)?[A-Za-z0-9+/]{8,}={0,2}",
            re.IGNORECASE,
        ),
        (
            "URL with credentials",
            r"\b[a-z][a-z0-9+.\-]{0,31}://[^\s/:@]*:(?!(?:password|passwd|pass|pwd|secret|changeme|\*+|x+"
            r"|<[^>@]*>|\$?\{[^}@]*\}|%\([^)@]*\)s)@)[^\s/@]+@[^\s/]+",
            re.IGNORECASE,
        ),
        (
            "connection-string key",
            r"\b(?:AccountKey|SharedAccessKey|SharedSecret|ClientSecret)\s*=\s*[^;\s'\"]{6,}",
            re.IGNORECASE,
        ),
        (
            "connection-string key",
            r";\s*(?:Password|Pwd)\s*=\s*[^;\s'\"]{3,}|\b(?:Password|Pwd)\s*=\s*[^;\s'\"]{3,};",
            re.IGNORECASE,
        ),
        ("password", r"(?:密码|口令|密钥|令牌|秘钥)\s*(?:是|为|[:：=])\s*\S{3,}", 0),
        ("registry credentials", r"\"auth\"\s*:\s*\"[A-Za-z0-9+/]{16,}={0,2}\"", 0),  # Docker's
        (
            "password hash",  # crypt(3) and htpasswd forms: crackable offline
            r"(?<![\w$])\$(?:apr1|2[abxy]|1|5|6|y|argon2(?:id|i|d))\$[./A-Za-z0-9$=,+]{20,}",
            0,
        ),
    )
)

KEYWORD = (
    r"(?<![A-Za-z])(?:api[ _.\-]?key|apikey|secret(?:[ _.\-]?key)?|client[ _.\-]?secret"
    r"|access[ _.\-]?key(?:[ _.\-]?id)?|auth[ _.\-]?token|access[ _.\-]?token|refresh[ _.\-]?token"
    r"|token|private[ _.\-]?key|signing[ _.\-]?key|credentials?|license[ _.\-]?key"
    r"|webhook[ _.\-]?secret|encryption[ _.\-]?key|master[ _.\-]?key|session[ _.\-]?key"
    r"|app[ _.\-]?key)s?"
)
_QUALIFIER = r"(?:\s+(?:for|of|to|on)(?:\s+[\w.@\-]+){1,3}?)?"
"""Up to three words naming what a credential is for ("password for the staging db is …")."""
_ANNOTATION = r"(?::\s*&?(?:'[A-Za-z_]\w*\s+)?[A-Za-z_][\w.]*(?:\[[\w.\[\], |]*\])?(?=\s*=))?"
"""A type annotation between a name and its value (``API_KEY: str = "…"``, ``Final[str]``,
Rust's ``&str`` and ``&'static str``)."""
_CONTINUED = r"(?:[\\(]\s*|[|>][+\-]?[1-9]?[ \t]*\n\s*|(?:\"\"\"|\'\'\')\s*)?"
"""A value continued on the next line: after a backslash or an opening parenthesis, a YAML
block scalar's ``|`` or ``>-``, or the quotes opening a multi-line string (TOML, Python)."""
_PASSWORD_WORD = r"(?<![A-Za-z])(?:password|passwd|passphrase|passcode|pwd|pin code|[a-z]+_pass)"
_KEYED_VALUE = re.compile(
    KEYWORD
    + r"[\"']?"
    + _QUALIFIER
    + _ANNOTATION
    + r"\s*(?P<sep>[:=]+|\s(?:is|was|are|:|with)\s|\s\|\s|\s)\s*"
    + _CONTINUED
    + r"(?:[bBrRuU]{0,2}[\"'`])?(?:base64:)?(?P<value>[A-Za-z0-9/+_.=\-]{12,})(?P<after>[(.\w]?)",
    re.IGNORECASE,
)
_XML_KEYED = re.compile(
    r"key=[\"']" + KEYWORD + r"[\"']\s+value=[\"'](?P<value>[^\"'\s]{12,})[\"']", re.IGNORECASE
)
"""``<add key="ApiKey" value="…"/>`` settings of .NET and Java configuration files."""
_XML_ELEMENT = re.compile(
    r"<(?P<tag>(?:[\w\-]*[.:_\-])?(?:(?P<password>"
    + _PASSWORD_WORD
    + r")|"
    + KEYWORD
    + r"))(?:\s[^<>]{0,200})?>\s*(?:<!\[CDATA\[)?"
    + r"(?P<value>[^<>\s]{4,200}?)(?:\]\]>)?\s*</(?P=tag)>",
    re.IGNORECASE,
)
"""An XML element named for a credential (``<password>…</password>`` in Maven's settings,
``<apiKey>…</apiKey>``, ``<db.password>``), its value on the same line or the next."""
_PASSWORD_SHAPES = (
    re.compile(  # curl -u user:password
        r"\bcurl\b[^\n|;&]{0,300}?\s(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"'$]{1,100}:"
        r"(?P<value>[^\s\"'@]{3,200})"
    ),
    re.compile(  # .netrc
        r"\b(?:machine\s+\S{1,253}|default)\s+login\s+\S{1,100}\s+password\s+(?P<value>\S{3,200})"
    ),
    re.compile(  # .pgpass: host:port:database:user:password
        r"^[^\s:#]{1,253}:(?:\d{1,5}|\*):[^\s:]{1,100}:[^\s:]{1,100}:(?P<value>\S{3,200})$", re.M
    ),
    re.compile(  # mysql -pPASSWORD
        r"\bmysql(?:dump|admin|sh)?\b[^\n|;&]{0,200}?\s-p(?P<value>[^\s'\"]{3,200})"
    ),
    re.compile(  # --password VALUE (the = form is an assignment); not "--password options"
        r"(?<![\w-])--(?:password|passwd|pass)\s+[\"']?(?P<value>(?![a-z]+\b)[^\s\"'|;&]{3,200})"
    ),
    re.compile(  # Terraform: variable "db_password" { default = "…" }
        _PASSWORD_WORD + r"\w*\"\s*\{[^{}]{0,300}?\bdefault\s*=\s*\"(?P<value>[^\"\n]{3,200})\"",
        re.IGNORECASE,
    ),
)
"""Passwords in the shapes of a credentials file or a command line, each judged as a password
(a variable, a template or a stand-in is left)."""
_ENCODED_KEY = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}")
"""Base64 of a PEM block (``-----BEGIN `` encoded), as Kubernetes secrets and CI variables hold
one; ``encoded_key`` tells a private key from a certificate."""
_VARIABLE_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
"""An environment variable's name (``GPG_PASSPHRASE``), where a value would be."""
_VALUE_GOES_ON = re.compile(r"(?:\\\n[ \t]*[A-Za-z0-9/+_.=\-]+){1,8}")
"""A value continued after a backslash ending its line (a Java properties file)."""
_PASSWORD = re.compile(
    _PASSWORD_WORD
    + r"[\"']?"
    + _QUALIFIER
    + r"\s*(?P<sep>[:=]+|\s(?:is|was|:)\s)\s*"
    + _CONTINUED
    + r"(?:[bBrRuU]{1,2}(?=[\"']))?(?P<value>\"[^\"\n]{3,}\"|'[^'\n]{3,}'|\S+)(?P<rest>[^\n]{0,2})",
    re.IGNORECASE,
)
_PIECE = r"[bBrRuUfF]{0,2}(?:\"(?:[^\"\\\n]|\\.){0,200}\"|'(?:[^'\\\n]|\\.){0,200}')(?![\"'])"
"""One string literal on one line (with a prefix: ``b"…"``, ``f'…'``; not a docstring's quotes)."""
_JOINED_LITERAL = re.compile(
    r"(?P<word>"
    + KEYWORD
    + "|"
    + _PASSWORD_WORD
    + r")[\"']?"
    + _ANNOTATION
    + r"\s*(?P<sep>[:=]+)[ \t]*(?P<paren>\(\s*)?(?P<value>"
    + _PIECE
    # inside parentheses pieces may be on any line; outside, on the next only after \ or +
    + r"(?:(?(paren)\s*[\\+]?\s*|[ \t]*(?:[\\+]\s*)?)"
    + _PIECE
    + r"){1,16})",
    re.IGNORECASE,
)
"""A value written as adjacent literals, on one line or several: ``KEY = ("abc"`` then
``"def")``, ``"abc" \\`` then ``"def"``, ``"abc" + "def"`` (each piece alone may look like
nothing)."""
_ADJACENT = re.compile(r"[^\"'\s=(\[{,:][\"'](?:[ \t]*[\\+])?\s*[bBrRuUfF]{0,2}[\"'][^\"'\n]")
"""A literal closed and another opened right after it: where ``_JOINED_LITERAL`` can match.
Searching that pattern everywhere took a quarter of all redaction time on source code; it is
tried only at the credential words just before these places (``joined_matches``)."""
NAME_REACH = 400
"""How far before the first join a value's name can start (its separator, an opening
parenthesis and a first piece of up to 200 characters)."""
_JOIN_NAME = re.compile(KEYWORD + "|" + _PASSWORD_WORD, re.IGNORECASE)
_PASSWORD_NAME = re.compile(_PASSWORD_WORD, re.IGNORECASE)
_KEY_CHARS = re.compile(r"[A-Za-z0-9/+_.=\-]{12,}")
"""What a keyed value is made of (as ``_KEYED_VALUE``'s value)."""
_PIECE_TEXT = re.compile(r"(?:\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)')")
PLACEHOLDER = re.compile(
    r"your|example|sample|dummy|placeholder|changeme|redacted|xxxx|\*\*\*|<|>|\$\{|\{\{|%\(|"
    r"env\b|environ|getenv|none|null|undefined|todo|fixme|here",
    re.IGNORECASE,
)
"""Words and shapes of values that stand in for a secret rather than being one."""
NOT_A_PASSWORD = frozenset(
    "required hashed salted set empty missing wrong incorrect invalid expired correct stored "
    "kept managed needed optional mandatory unknown same different rotated reset changed "
    "encrypted long short weak strong too not never always the a an in at on of from via "
    "configured provided given sent shown hidden masked generated random secure true false".split()
)
"""Words that follow "password is" in a sentence about passwords, not in a leak of one."""
MIN_SECRET_CHARS = 12
MIN_ENTROPY_BITS = 3.0
"""Shannon entropy per character below which a keyed value reads as a word, not a key."""
_IDENTIFIER = re.compile(r"[A-Za-z]+(?:[_.\-][A-Za-z]+)*|[a-z]+(?:[A-Z][a-z]+)+")
_NAMES = re.compile(r"[A-Za-z]+(?:[_.\-][A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z0-9_]+")
"""Values that name something (``get_token``, ``settings.API_KEY``, ``readKey``, ``API_KEY``)."""


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_random(value: str) -> bool:
    """Return True when ``value`` looks like a generated credential rather than a word.

    It must be long enough, mix character classes (or be long hex), not be an identifier
    made of words (``get_token_from_env``, ``readApiKey``) or a placeholder, and have high
    Shannon entropy.
    """
    value = value.strip("\"'`.,;")
    if len(value) < MIN_SECRET_CHARS or PLACEHOLDER.search(value):
        return False
    if _IDENTIFIER.fullmatch(value):
        return False
    classes = sum(bool(re.search(p, value)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    return classes >= 2 and _entropy(value) >= MIN_ENTROPY_BITS


def _keyed_secret(value: str, sep: str, after: str) -> bool:
    """Judge a value found next to a credential keyword.

    In a sentence ("the api key is …") the value must look random. In an assignment
    (``token = …``) any literal counts, except names of other things (a variable, a call, an
    environment variable) and placeholders.
    """
    if looks_random(value):
        return True
    if sep.strip() not in (":", "=", "==", ":="):
        return False
    value = value.strip("\"'`")
    return not (
        after
        or _NAMES.fullmatch(value)
        or PLACEHOLDER.search(value)
        or len(value) < MIN_SECRET_CHARS
    )


def _password(text: str) -> bool:
    return any(_is_password(match) for match in _PASSWORD.finditer(text))


def _is_password(match: re.Match[str]) -> bool:
    """Judge one "password … value" match: a leaked password, or words about one."""
    value = match.group("value")
    if value[0] in "\"'":
        return not PLACEHOLDER.search(value) and len(value) > 4
    word = value.rstrip(".,;!?")
    assigned = match.group("sep").strip() in (":", "=", "==")
    if (
        not word
        or PLACEHOLDER.search(word)
        or word.lower() in NOT_A_PASSWORD
        or "(" in word
        or (assigned and _NAMES.fullmatch(word))
    ):
        return False  # a sentence about passwords, or a variable holding one
    symbolic = re.search(r"[\d!@#$%^&*]", word) is not None
    clause_ends = match.group("rest").strip()[:1] in ("", ".", ",", ";", "!", ")")
    return symbolic or (assigned and len(word) >= 3) or (clause_ends and len(word) >= 4)


def joined_matches(text: str) -> Iterator[re.Match[str]]:
    """Yield ``_JOINED_LITERAL``'s matches in ``text``, tried only before adjacent literals."""
    done = 0  # where the last value found ends, or the names were read up to
    for hit in _ADJACENT.finditer(text):
        # each name is tried once: a value from it that does not reach this join reaches
        # no later one either, so the names before ``done`` need no second look
        start, done = max(hit.start() - NAME_REACH, done), max(hit.start(), done)
        for name in _JOIN_NAME.finditer(text, start, hit.start()):
            match = _JOINED_LITERAL.match(text, name.start())
            if match and match.end() > hit.start():
                yield match
                done = match.end()
                break


def joined_secret(match: re.Match[str]) -> str | None:
    """Judge a value written as adjacent literals: the kind of secret the pieces make, or None."""
    value = "".join(a or b for a, b in _PIECE_TEXT.findall(match.group("value")))
    if "{" in value or "%" in value or PLACEHOLDER.search(value):
        return None  # a template filled in later, or a stand-in
    if _PASSWORD_NAME.fullmatch(match.group("word")):
        return "password" if len(value) > 4 else None
    if not _KEY_CHARS.fullmatch(value):
        return None  # words with spaces: a message about a key, not one
    return "credential" if _keyed_secret(value, match.group("sep"), "") else None


def _stand_in(value: str) -> bool:
    """Tell whether a password-like value stands in for one (``${PW}``, ``SONATYPE_PASSWORD``)."""
    return bool(
        PLACEHOLDER.search(value)
        or value.startswith(("$", "{", "%", "`"))
        or _VARIABLE_NAME.fullmatch(value)  # replaced by a script before use
        or _PASSWORD_NAME.search(value)  # "password", "some_password"
    )


def encoded_key(match: re.Match[str]) -> bool:
    """Tell whether a base64 PEM block (``_ENCODED_KEY``) holds a private key."""
    head = match.group(0)[:96]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head[: len(head) // 4 * 4])
    except ValueError:
        return False


def element_secret(match: re.Match[str]) -> str | None:
    """Judge an XML element named for a credential: the kind of its value, or None."""
    value = match.group("value")
    if _stand_in(value):
        return None
    if match.group("password"):
        return "password" if value.lower() not in NOT_A_PASSWORD else None
    return "credential" if _keyed_secret(value, "=", "") else None


def shaped_password(match: re.Match[str]) -> bool:
    """Judge a password found by its shape (``_PASSWORD_SHAPES``): one unless a stand-in."""
    return not _stand_in(match.group("value"))


def value_end(text: str, end: int) -> int:
    """Return where a value ending at ``end`` really ends (past backslash line continuations)."""
    more = _VALUE_GOES_ON.match(text, end)
    return more.end() if more else end


def find_secret(text: str) -> str | None:
    """Return the kind of secret found in ``text``, or None when it looks clean.

    Covers provider key formats, tokens, webhook URLs, basic and bearer credentials,
    connection-string keys, passwords in assignments or sentences ("the password is X",
    English and Chinese), private-key blocks, URLs with embedded credentials, and any
    random-looking value next to a credential keyword ("api key is 9f8e…").
    """
    pieces = scan_pieces(Squeezed.of(text).text)  # linear time on hostile text
    return next((kind for _, piece in pieces if (kind := _kind_of_secret(piece))), None)


def _kind_of_secret(text: str) -> str | None:
    for kind, pattern in SECRET_PATTERNS:
        if pattern.search(text):
            return kind
    if _password(text):
        return "password"
    for match in _KEYED_VALUE.finditer(text):
        if _keyed_secret(match.group("value"), match.group("sep"), match.group("after")):
            return "credential"
    for match in _XML_KEYED.finditer(text):
        if _keyed_secret(match.group("value"), "=", ""):
            return "credential"
    if any(map(encoded_key, _ENCODED_KEY.finditer(text))):
        return "private key"
    for match in _XML_ELEMENT.finditer(text):
        if element := element_secret(match):
            return element
    if any(shaped_password(m) for shape in _PASSWORD_SHAPES for m in shape.finditer(text)):
        return "password"
    return next(filter(None, map(joined_secret, joined_matches(text))), None)


def find_secret_in(value: object) -> str | None:
    """Return the kind of secret found anywhere in a record: its strings, keys and pairs.

    A mapping's entries are also checked as ``key=value`` text, so a value stored under a
    field named ``api_key`` or ``password`` is judged with its keyword.
    """
    if isinstance(value, str):
        return find_secret(value)
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = find_secret_in(key) or find_secret_in(item)
            if found is None and isinstance(item, str | int):
                found = find_secret(f"{key}={item}")
            if found:
                return found
        return None
    if isinstance(value, list | tuple | set | frozenset):
        return next((k for k in map(find_secret_in, value) if k), None)
    return None


SECRET_ENV_NAME = re.compile(
    r"^(OPENAI|ANTHROPIC|ENGRAM|AZURE_OPENAI|DEEPSEEK|MISTRAL|GROQ|COHERE|HF|HUGGING_?FACE"
    r"|AWS|GOOGLE_APPLICATION)_|(_TOKEN|_KEY|_PAT|_PASS|_DSN)$|SECRET|PASSW|CREDENTIAL"
    r"|API_?KEY|PRIVATE|AUTH|SESSION|COOKIE|DATABASE_URL",
    re.IGNORECASE,
)
"""Environment variable names never passed to a program engram starts: keys, tokens, …"""


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """Return ``environ`` without secrets: by name (keys, tokens, …) or by value (credentials)."""
    return {
        name: value
        for name, value in environ.items()
        if not SECRET_ENV_NAME.search(name) and not find_secret(value)
    }


def with_article(kind: str) -> str:
    """Return the kind of secret with its article: "an OpenAI API key", "a GitHub token"."""
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"
