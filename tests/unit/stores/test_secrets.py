"""Secret detection shared by every memory write path."""

from __future__ import annotations

import pytest

from engram.stores.secrets import find_secret

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
