"""Secret detection shared by every memory write path."""

from __future__ import annotations

import time

import pytest

from engram.stores import find_secret
from engram.stores._secrets import find_secret_in

SECRETS = [
    "my key is sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
    "AWS AKIAIOSFODNN7EXAMPLE is the deploy key",
    "use ghp_abcdefghijklmnopqrstuvwxyz0123456789 to push",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL",
    "slack xoxb-1234567890-abcdefghijkl",
    "AIzaSyA-abcdefghijklmnopqrstuvwxyz123456",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "sk_live_abcdefghijklmnop1234",
    "Authorization: Bearer abcdef1234567890abcdef",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "db is postgres://admin:s3cret@db.internal:5432/app",
    "password = hunter2",
    "DB_PASSWORD: 'Tr0ub4dor&3'",
    "my password is hunter2!",
    'the password is "correct horse"',
    "api_key=0123456789abcdef0123",
    "client_secret: abcdefghijklmnopqrstuv",
    "数据库密码是 abc12345",
    "密钥：ZXCVBNM123456",
    # classes a keyword list alone misses: plain-word passwords, connection strings, provider
    # tokens, webhooks, basic credentials, a keyed random value in a sentence
    "the wifi password is sunflower",
    "password for the staging db is bluebird",
    "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=q3uxRS6BBEiVUCc6Lc5BMB9jbzp==",
    "Server=tcp:db,1433;User ID=sa;Password=k9Lm2Qx8Vb;Encrypt=True",
    "SENDGRID_API_KEY=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",
    "TELEGRAM=123456789:AAh1x2Y3z4A5b6C7d8E9f0G1h2I3j4K5l6M",
    "https://hooks.slack.com/services/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",
    "https://discord.com/api/webhooks/123456789012345678/a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "Authorization: Basic ZGVwbG95OnMzY3IzdFBhc3N3b3Jk",
    "the api key is 9f86d081884c7d659a2feaa0c55ad015",
]

CLEAN = [
    "This project uses Java 17",
    "Reply in Chinese",
    "Passwords are hashed with argon2",
    "The password policy requires 12 characters",
    "the password is stored in the vault",
    "Use the token bucket algorithm for rate limits",
    "Docs live at https://docs.example.com/guide",
    "密码策略要求至少 12 位",
    "API keys come from the environment variable OPENAI_API_KEY",
    # random-looking values and references that are not secrets
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    '"integrity": "sha512-Kq5sNclPz7QV2+lfQIuQ5Nz2Xl0G2oVjx1x1GAHg1j7LpVv6yAo5uFvD1Q=="',
    "request id 123e4567-e89b-42d3-a456-426614174000",
    "api_key = os.getenv('OPENAI_API_KEY')",
    "password = getpass.getpass()",
    "DATABASE_URL=postgres://user:password@localhost/db",
    '"publishable_key": "pk_test_TYooMQauvdEDq54NiTphI7jx"',
    "class TokenRefreshSchedulerConfigurationFactory:",
]


@pytest.mark.parametrize("text", SECRETS)
def test_secrets_are_found(text):
    assert find_secret(text) is not None


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_facts_pass(text):
    assert find_secret(text) is None


def test_kind_is_named():
    assert find_secret("-----BEGIN PRIVATE KEY-----") == "private key"
    assert find_secret("https://bob:pw1@example.com") == "URL with credentials"


def test_recall_and_false_positive_rate_on_the_corpus():
    from bench.reliability.secrets import load_corpus, score

    records = load_corpus()
    assert sum(1 for r in records if r["secret"]) >= 100
    assert sum(1 for r in records if not r["secret"]) >= 100
    result = score(records)
    assert result.recall >= 0.95, result.missed
    assert result.false_positive_rate <= 0.05, result.flagged


def test_every_field_of_a_record_is_checked():
    assert find_secret_in({"id": "f1", "text": "plain"}) is None
    assert find_secret_in({"id": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}) == "GitHub token"
    assert find_secret_in({"provenance": {"api_key": "9f86d081884c7d659a2feaa0c55ad015"}})
    assert find_secret_in({"tags": ["a", "xoxb-1234567890-abcdefghijkl"]}) == "Slack token"


def test_a_text_built_to_make_the_patterns_backtrack_is_judged_at_once():
    # a hang guard (minutes before, cubic in the run of spaces); bench/RESULTS.md has figures
    started = time.monotonic()
    assert find_secret("token" + " " * 100_000 + "!") is None
    assert find_secret("x " + "eyJ" * 33_000) is None
    key = "sk-proj-T3stTokenAbcdefGhijklMnop1234"
    assert find_secret("api_key" + " " * 100_000 + f"= '{key}'") is not None
    assert find_secret("var a=1;" * 5_000 + f'var k="{key}";') is not None
    assert time.monotonic() - started < 30
