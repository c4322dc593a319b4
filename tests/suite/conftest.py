"""Fixtures for the suite tests: small native conversations, so each test states only its point."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from suite_helpers import build_conversation, build_turn


@pytest.fixture
def turn() -> Callable[..., dict[str, Any]]:
    return build_turn


@pytest.fixture
def conversation() -> Callable[..., dict[str, Any]]:
    return build_conversation
