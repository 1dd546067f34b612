"""The warning for a secret file others can read (issue 21): one line naming the file and
`chmod 600`, once per file however often it is read; nothing for a private file. Read
through the real readers: the sign-in token key of a sealed token file."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sidecar import private_files
from sidecar.private_files import warn_if_shared
from sidecar.upstream.oauth.sealed import TokenFile


@pytest.fixture(autouse=True)
def _fresh_memory() -> None:
    private_files._warned.clear()  # each test starts as a new process would


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "sidecar.private_files"]


def test_a_shared_file_is_named_once_with_the_fix(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    secret = tmp_path / "token"
    secret.write_text("x" * 32)
    secret.chmod(0o604)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            warn_if_shared(secret, "the token file")
    assert _warnings(caplog) == [f"the token file {secret} can be read by other users (mode 0604): "
                                 f"run `chmod 600 {secret}`"]


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_private_or_missing_file_says_nothing(tmp_path: Path, mode: int, caplog: pytest.LogCaptureFixture) -> None:
    secret = tmp_path / "token"
    secret.write_text("x")
    secret.chmod(mode)
    with caplog.at_level(logging.WARNING):
        warn_if_shared(secret, "the token file")
        warn_if_shared(tmp_path / "absent", "the token file")
    assert _warnings(caplog) == []


def test_the_sign_in_key_read_by_the_token_file_is_checked(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    tokens = TokenFile(tmp_path / "mcp-oauth.json", tmp_path / "mcp-oauth.key")
    with tokens.edit() as servers:  # the key is made private, 0600: no warning
        servers["https://a.example/mcp"] = {"accessToken": "t"}
    assert _warnings(caplog) == []
    (tmp_path / "mcp-oauth.key").chmod(0o644)  # a copy made carelessly
    with caplog.at_level(logging.WARNING):
        assert "https://a.example/mcp" in tokens.read()
        tokens.read()
    assert _warnings(caplog) == [f"the sign-in token key {tmp_path / 'mcp-oauth.key'} can be read by other users "
                                 f"(mode 0644): run `chmod 600 {tmp_path / 'mcp-oauth.key'}`"]
