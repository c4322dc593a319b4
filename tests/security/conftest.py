"""The XSS corpus drives the system Chromium like tests/browser (never a downloaded browser).

Playwright's sync API allows one driver per thread, and tests/browser/conftest.py keeps its
own for the whole session: so the browser tests of this folder run in a pytest session of
their own (.ci/run does so) until that fixture moves to tests/conftest.py for both folders.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between page actions, as there


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`", pytrace=False)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        pytest.fail(
            "another Playwright driver runs in this pytest session (tests/browser's): run "
            "`pytest -m browser tests/security` on its own, as .ci/run does",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=60_000
        )
        try:
            yield browser
        finally:
            browser.close()
