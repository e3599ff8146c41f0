"""URL passwords are masked in every message and log line (engram.stores._url_masking)."""

from __future__ import annotations

import logging

import pytest

from engram.stores import MaskingFilter, mask_url_passwords


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "cannot reach postgresql://bob:s3cretpw@db.internal:5432/team now",
            "cannot reach postgresql://bob:***@db.internal:5432/team now",
        ),
        (  # a driver quoting a malformed URL
            'in URI: "postgresql://bob:s3cretpw@[::1/db"',
            'in URI: "postgresql://bob:***@[::1/db"',
        ),
        ("host=db password=s3cretpw port=5432", "host=db password=*** port=5432"),
        ("host=db password='s3cret pw' port=5432", "host=db password=*** port=5432"),
        ("http://u:p@ss@chroma:8000/api", "http://u:***@chroma:8000/api"),
        ("postgresql://bob@db/team", "postgresql://bob@db/team"),  # no password to hide
        (  # a documented example keeps its placeholder
            "use postgresql://USER:PASSWORD@HOST:5432/DATABASE",
            "use postgresql://USER:PASSWORD@HOST:5432/DATABASE",
        ),
    ],
)
def test_passwords_in_urls_and_connection_strings_are_masked(text, shown):
    assert mask_url_passwords(text, []) == shown


def test_pieces_of_a_configured_password_are_masked_where_a_driver_split_it():
    configured = "postgresql://bob:s3cret@pw99@db.internal/team"
    said = "failed to resolve host 'pw99@db.internal'; user bob:s3cret"
    masked = mask_url_passwords(said, [configured])
    assert "pw99" not in masked and "s3cret" not in masked


def test_the_environment_names_the_urls_to_mask_by_default(monkeypatch):
    monkeypatch.setenv("ENGRAM_DATABASE_URL", "bob:hunter22xyz@db")  # malformed, no scheme
    assert "hunter22xyz" not in mask_url_passwords("missing '=' after 'bob:hunter22xyz@db'")


def test_log_lines_are_masked_by_the_filter():
    record = logging.LogRecord(
        "psycopg", logging.WARNING, __file__, 1, "lost %s", ("postgresql://a:b1c2d3@h/d",), None
    )
    assert MaskingFilter().filter(record)
    assert record.getMessage() == "lost postgresql://a:***@h/d"
