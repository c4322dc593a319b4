"""A small client for a judge model behind any OpenAI-compatible chat completions API.

It sends one question, reads the reply and the tokens it cost, and turns every way that can go wrong into
``JudgeUnavailable`` with a plain reason. Standard library only. The judge is a project's ``entailment``
options, else the site's ``RECEIPTS_JUDGE_URL`` and ``RECEIPTS_JUDGE_MODEL``. Keys never sit in options,
and each goes to its own judge only: the site's key (``RECEIPTS_JUDGE_API_KEY``) to the site's URL, a
project's own key (passed in) to the judge its options name, which is reached through ``outbound``.
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

from . import outbound
from .conversation import content_text
from .options import EntailmentOptions

ENV_URL, ENV_MODEL, ENV_KEY = "RECEIPTS_JUDGE_URL", "RECEIPTS_JUDGE_MODEL", "RECEIPTS_JUDGE_API_KEY"

RETRIES = 2  # after the first attempt, on a refused connection, a 5xx or a 429
BACKOFF_S = 0.2  # first pause; doubled before each further attempt
MAX_REPLY_TOKENS = 200  # a verdict word and one sentence need far fewer
MAX_RESPONSE_BYTES = 1_000_000
_RETRY_STATUSES = {429, 500, 502, 503, 504}


class JudgeUnavailable(outbound.Reasoned):
    """The judge could not give a verdict, and why."""


class _Retryable(JudgeUnavailable):
    """A failure the next attempt may not meet: a refused connection, a 5xx or a 429."""


@dataclass(frozen=True)
class JudgeConfig:
    url: str  # the API base, e.g. http://127.0.0.1:11434/v1
    model: str
    api_key: str | None = field(repr=False)  # never in a log line or a traceback
    timeout_s: float
    # The addresses a project's judge may reach besides public ones; None for the site's.
    allow: outbound.Allow | None = None


@dataclass(frozen=True)
class Reply:
    text: str
    model: str  # the model the API says answered, else the one asked
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


def project_url(options: EntailmentOptions, env: Mapping[str, str] | None = None) -> str | None:
    """The judge URL these options name when it is not the site's own; None otherwise."""
    site = ((os.environ if env is None else env).get(ENV_URL) or "").strip()
    if not options.judge_url or (site and options.judge_url.rstrip("/") == site.rstrip("/")):
        return None
    return options.judge_url


def resolve(
    options: EntailmentOptions,
    env: Mapping[str, str] | None = None,
    *,
    project_key: str | None = None,
    allow: outbound.Allow | None = None,
) -> JudgeConfig | None:
    """The judge these options name, the site's filling the gaps, or None; ``project_key`` and ``allow``
    (else the environment's list; ValueError for a bad one) are for a judge the options name."""
    env = os.environ if env is None else env
    model = options.model or (env.get(ENV_MODEL) or "").strip() or None
    url = options.judge_url or (env.get(ENV_URL) or "").strip()
    if not url or not model:
        return None
    if project_url(options, env) is None:  # the site's judge
        return JudgeConfig(url, model, env.get(ENV_KEY) or None, options.timeout_s)
    allow = outbound.Allow.parse(env.get(outbound.ALLOW_SETTING)) if allow is None else allow
    return JudgeConfig(url, model, project_key or None, options.timeout_s, allow)


def endpoint(url: str) -> str:
    """The chat completions URL of an API base (a full endpoint URL is kept as given)."""
    base = url.rstrip("/")
    return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


class Judge:
    """Asks one model questions, one at a time, at temperature 0."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self._opener = outbound.opener(config.allow)

    def ask(self, question: str) -> Reply:
        message = {"role": "user", "content": question}
        body = {"model": self.config.model, "messages": [message], "temperature": 0}
        body |= {"max_tokens": MAX_REPLY_TOKENS, "stream": False}
        key = {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}
        headers = {"Content-Type": "application/json", "Accept": "application/json", **key}
        data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(endpoint(self.config.url), data, headers, method="POST")
        for attempt in range(RETRIES + 1):
            try:
                return _reply(self._post(request), self.config.model)
            except _Retryable as exc:
                if attempt == RETRIES:
                    raise JudgeUnavailable(f"{exc.reason}, after {RETRIES + 1} attempts") from None
                time.sleep(BACKOFF_S * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(self, request: urllib.request.Request) -> bytes:
        # Neither a refusal (the address is the same next time) nor a timeout (a judge slow now is
        # likely slow again, and the run waits) is retried.
        where = f"the judge at {request.full_url}"
        try:
            with self._opener.open(request, timeout=self.config.timeout_s) as response:
                return response.read(MAX_RESPONSE_BYTES + 1)
        except outbound.Refused as exc:
            raise JudgeUnavailable(f"{where} is refused: {exc.reason}") from None
        except urllib.error.HTTPError as exc:
            hint = " (check the API key)" if exc.code in (401, 403) else ""
            failure = _Retryable if exc.code in _RETRY_STATUSES else JudgeUnavailable
            raise failure(f"{where} answered HTTP {exc.code}{hint}{_excerpt(exc)}") from None
        except OSError as exc:  # a URLError says why in its reason
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
                slow = f"did not answer within {self.config.timeout_s:g} s (entailment.timeout_s)"
                raise JudgeUnavailable(f"{where} {slow}") from None
            raise _Retryable(f"{where} could not be reached ({reason})") from None


def _excerpt(exc: urllib.error.HTTPError) -> str:
    try:
        text = " ".join(exc.read(300).decode("utf-8", "replace").split())
    except Exception:  # the status alone is reason enough
        return ""
    return f": {text[:200]}" if text else ""


def _reply(raw: bytes, asked_model: str) -> Reply:
    if len(raw) > MAX_RESPONSE_BYTES:
        raise JudgeUnavailable("the judge's response was larger than a chat completion should be")
    try:
        data = json.loads(raw)
        content = data["choices"][0]["message"]["content"]
    except ValueError:
        raise JudgeUnavailable("the judge's response was not JSON") from None
    except (KeyError, IndexError, TypeError):
        raise JudgeUnavailable("the judge's response had no choices[0].message.content") from None
    if isinstance(content, list):  # content parts, as some servers send them: any part's text
        content = content_text(content, lambda part: part.get("text", ""))
    if not isinstance(content, str):
        raise JudgeUnavailable("the judge's response content was not text")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    counts = (usage.get(f"{k}_tokens") for k in ("prompt", "completion", "total"))
    prompt, completion, total = (n if type(n) is int and n >= 0 else 0 for n in counts)
    model = data.get("model") if isinstance(data.get("model"), str) and data.get("model") else asked_model
    return Reply(content, model, prompt, completion, total or prompt + completion)


_THINKING = re.compile(r"<think>.*?</think>", re.S | re.I)
_VERDICT = re.compile(r"(yes|no)\b[\s\W]*(.*)", re.S)


@dataclass(frozen=True)
class Verdict:
    said: str | None  # "yes", "no", or None when the first line is neither
    reason: str  # what follows the verdict word, on its line and the lines after


def verdict_of(text: str) -> Verdict:
    """``yes``/``no`` from the first non-empty line, decoration aside (``**Yes**``, ``"no."``), and the
    reason from the rest. A first line that starts with neither word is no verdict, never an accusation."""
    lines = [line.strip() for line in _THINKING.sub("", text or "").splitlines() if line.strip()]
    match = _VERDICT.match(re.sub(r"^[\W_]+", "", lines[0]).lower()) if lines else None
    if match is None:  # no verdict, whatever the reply goes on to say
        return Verdict(None, " ".join(lines))
    rest_of_line = match.group(2)
    if rest_of_line and len(lines[0]) == len(lines[0].lower()):
        # The reason in its own case: the same suffix of the line as written.
        rest_of_line = lines[0][len(lines[0]) - len(rest_of_line) :]
    reason = " ".join(part for part in [rest_of_line.strip(), *lines[1:]] if part)
    return Verdict(match.group(1), reason.strip())
