"""A small client for a judge model behind any OpenAI-compatible chat completions API.

The entailment checker asks a model of its own narrow yes/no questions. This module sends
one question, reads the reply and the tokens it cost, and turns every way that can go wrong
(no route, a timeout, an error status, a reply that is not the protocol) into
``JudgeUnavailable`` with a plain reason. Standard library only, so the suite keeps
running anywhere Python does.

Where the judge comes from: a project's ``entailment`` options, else the site-wide
``RECEIPTS_JUDGE_URL`` and ``RECEIPTS_JUDGE_MODEL`` of the environment. Keys never sit in
the options, and each goes to its own judge only:

- the site's key (``RECEIPTS_JUDGE_API_KEY``) goes to the site's URL alone, never to a
  judge a project points elsewhere;
- a project's own key is a secret the caller passes in (the server keeps it on the project,
  write-only), and goes to the judge the project's options name.

The site's URL is the operator's, and is not checked. A URL a project's options name is
reached through ``outbound``: its addresses are checked against the operator's allow-list
(``RECEIPTS_OUTBOUND_ALLOW``, passed in, or read from the environment like the site's
judge), no proxy is used and no redirect followed.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import outbound
from .options import EntailmentOptions

ENV_URL = "RECEIPTS_JUDGE_URL"
ENV_MODEL = "RECEIPTS_JUDGE_MODEL"
ENV_KEY = "RECEIPTS_JUDGE_API_KEY"

RETRIES = 2  # after the first attempt, on a refused connection, a 5xx or a 429
BACKOFF_S = 0.2  # first pause; doubled before each further attempt
MAX_REPLY_TOKENS = 200  # a verdict word and one sentence need far fewer
MAX_RESPONSE_BYTES = 1_000_000
_RETRY_STATUSES = {429, 500, 502, 503, 504}


class JudgeUnavailable(Exception):
    """The judge could not give a verdict; ``reason`` says why in plain words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class JudgeConfig:
    url: str  # the API base, e.g. http://127.0.0.1:11434/v1
    model: str
    api_key: str | None = field(repr=False)  # never in a log line or a traceback
    timeout_s: float
    # The addresses a project's judge may reach besides public ones; None for the site's
    # judge, whose URL is the operator's and is not checked.
    allow: outbound.Allow | None = None


@dataclass(frozen=True)
class Reply:
    text: str
    model: str  # the model the API says answered, else the one asked
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


def site_url(env: Mapping[str, str] | None = None) -> str | None:
    """The site-wide judge's URL from the environment, None when there is none."""
    env = os.environ if env is None else env
    return (env.get(ENV_URL) or "").strip() or None


def project_url(options: EntailmentOptions, env: Mapping[str, str] | None = None) -> str | None:
    """The judge URL these options name when it is not the site's own; None otherwise."""
    if not options.judge_url:
        return None
    site = site_url(env)
    if site is not None and options.judge_url.rstrip("/") == site.rstrip("/"):
        return None
    return options.judge_url


def resolve(
    options: EntailmentOptions,
    env: Mapping[str, str] | None = None,
    *,
    project_key: str | None = None,
    allow: outbound.Allow | None = None,
) -> JudgeConfig | None:
    """The judge these options name, with the site-wide one filling the gaps; None if none.

    ``project_key`` is the project's own key, for the judge its options name; the site's
    key goes to the site's URL only. ``allow`` is the operator's allow-list for a project's
    judge (read from the environment when not given).
    """
    env = os.environ if env is None else env
    model = options.model or (env.get(ENV_MODEL) or "").strip() or None
    url = options.judge_url or site_url(env)
    if not url or not model:
        return None
    if project_url(options, env) is None:  # the site's judge
        key = env.get(ENV_KEY) or None
        return JudgeConfig(url=url, model=model, api_key=key, timeout_s=options.timeout_s)
    if allow is None:
        allow = outbound.Allow.parse(env.get(outbound.ALLOW_SETTING))
    return JudgeConfig(
        url=url, model=model, api_key=project_key or None, timeout_s=options.timeout_s, allow=allow
    )


def endpoint(url: str) -> str:
    """The chat completions URL of an API base (a full endpoint URL is kept as given)."""
    base = url.rstrip("/")
    return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


class Judge:
    """Asks one model questions, one at a time, at temperature 0."""

    def __init__(self, config: JudgeConfig, *, sleep: Any = time.sleep) -> None:
        self.config = config
        self._sleep = sleep
        self._opener = outbound.opener(config.allow)

    @property
    def model(self) -> str:
        return self.config.model

    def ask(self, question: str) -> Reply:
        body = json.dumps(
            {
                "model": self.config.model,
                "messages": [{"role": "user", "content": question}],
                "temperature": 0,
                "max_tokens": MAX_REPLY_TOKENS,
                "stream": False,
            }
        ).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        url = endpoint(self.config.url)
        pause = BACKOFF_S
        for attempt in range(RETRIES + 1):
            try:
                raw = self._post(url, body, headers)
            except _Retryable as exc:
                if attempt == RETRIES:
                    raise JudgeUnavailable(f"{exc.reason}, after {RETRIES + 1} attempts") from None
                self._sleep(pause)
                pause *= 2
                continue
            return _reply(raw, self.config.model)
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(self, url: str, body: bytes, headers: dict[str, str]) -> bytes:
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        where = f"the judge at {url}"
        try:
            with self._opener.open(request, timeout=self.config.timeout_s) as response:
                return response.read(MAX_RESPONSE_BYTES + 1)
        except outbound.Refused as exc:
            # Not retried: the address is the same on the next attempt.
            raise JudgeUnavailable(f"{where} is refused: {exc.reason}") from None
        except urllib.error.HTTPError as exc:
            detail = _excerpt(exc)
            if exc.code in _RETRY_STATUSES:
                raise _Retryable(f"{where} answered HTTP {exc.code}{detail}") from None
            hint = " (check the API key)" if exc.code in (401, 403) else ""
            raise JudgeUnavailable(f"{where} answered HTTP {exc.code}{hint}{detail}") from None
        except TimeoutError:
            # Not retried: a judge that is slow now is likely slow again, and the run waits.
            raise JudgeUnavailable(
                f"{where} did not answer within {self.config.timeout_s:g} s (entailment.timeout_s)"
            ) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise JudgeUnavailable(
                    f"{where} did not answer within {self.config.timeout_s:g} s (entailment.timeout_s)"
                ) from None
            raise _Retryable(f"{where} could not be reached ({exc.reason})") from None
        except (ConnectionError, OSError) as exc:
            raise _Retryable(f"{where} could not be reached ({exc})") from None


class _Retryable(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _excerpt(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(300).decode("utf-8", "replace")
    except Exception:  # the status alone is reason enough
        return ""
    text = " ".join(text.split())
    return f": {text[:200]}" if text else ""


def _reply(raw: bytes, asked_model: str) -> Reply:
    if len(raw) > MAX_RESPONSE_BYTES:
        raise JudgeUnavailable("the judge's response was larger than a chat completion should be")
    try:
        data = json.loads(raw)
    except ValueError:
        raise JudgeUnavailable("the judge's response was not JSON") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise JudgeUnavailable("the judge's response had no choices[0].message.content") from None
    if isinstance(content, list):  # content parts, as some servers send them
        content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise JudgeUnavailable("the judge's response content was not text")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    prompt = _count(usage.get("prompt_tokens"))
    completion = _count(usage.get("completion_tokens"))
    total = _count(usage.get("total_tokens")) or prompt + completion
    model = data.get("model") if isinstance(data.get("model"), str) and data.get("model") else asked_model
    return Reply(
        text=content,
        model=model,
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


# --- verdicts ----------------------------------------------------------------------------

_THINKING = re.compile(r"<think>.*?</think>", re.S | re.I)
_VERDICT = re.compile(r"(yes|no)\b[\s\W]*(.*)", re.S)


@dataclass(frozen=True)
class Verdict:
    said: str | None  # "yes", "no", or None when the first line is neither
    reason: str  # what follows the verdict word, on its line and the lines after


def verdict_of(text: str) -> Verdict:
    """Read ``yes``/``no`` from the first non-empty line and the reason from the rest.

    Decoration around the word (``**Yes**``, ``NO -``, ``"no."``) is ignored; a first
    line that starts with neither word (``Nothing``, ``Maybe``, a blank reply) is no
    verdict at all, so it can never become an accusation.
    """
    cleaned = _THINKING.sub("", text or "")
    lines = [line.strip() for line in cleaned.splitlines() if line.strip()]
    if not lines:
        return Verdict(None, "")
    first = re.sub(r"^[\W_]+", "", lines[0]).lower()
    match = _VERDICT.match(first)
    if match is None:
        return Verdict(None, " ".join(lines))
    rest_of_line = match.group(2)
    if rest_of_line and len(lines[0]) == len(lines[0].lower()):
        # The reason in its own case: the same suffix of the line as written.
        rest_of_line = lines[0][len(lines[0]) - len(rest_of_line) :]
    reason = " ".join(part for part in [rest_of_line.strip(), *lines[1:]] if part)
    return Verdict(match.group(1), reason.strip())
