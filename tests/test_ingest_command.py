"""`manage.py ingest`: files and folders in, a summary out, exit 1 when anything was refused."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from checks.models import Conversation, Payload
from tests.conftest import EXAMPLES, load_example

pytestmark = pytest.mark.django_db


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("ingest", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_ingests_a_folder_of_examples(tmp_path: Path, django_capture_on_commit_callbacks: Any) -> None:
    # A folder of its own: the audit chains' heads are written under tmp_path (conftest), and
    # making the project writes the site chain's.
    folder = tmp_path / "examples"
    folder.mkdir()
    for path in EXAMPLES.glob("0*.json"):
        shutil.copy(path, folder)
    with django_capture_on_commit_callbacks(execute=True):
        out, err = _run("--project", "Imported", str(folder))
    assert "9 conversations from 9 files into 'Imported': 9 created." in out
    assert "9/9" in err  # the progress bar's last state
    assert Conversation.objects.filter(project__name="Imported").count() == 9
    again, _ = _run("--project", "Imported", str(folder))
    assert "9 unchanged" in again


def test_it_reads_json_lines_and_arrays(tmp_path: Path) -> None:
    lines = tmp_path / "a.jsonl"
    lines.write_text(json.dumps(load_example("01")) + "\n\n" + json.dumps(load_example("02")) + "\n")
    (tmp_path / "b.json").write_text(json.dumps([load_example("05"), load_example("06")]))
    out, _ = _run("--project", "P", str(lines), str(tmp_path / "b.json"))
    assert "4 conversations from 2 files" in out
    assert Payload.objects.get(conversation__external_id="ex-sencha").body == json.dumps(load_example("01"))


def test_it_exits_1_and_names_what_it_refused(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_text(json.dumps(load_example("01")))
    (tmp_path / "bad.json").write_text(
        json.dumps({"external_id": "x", "turns": [{"messages": [{"role": "bot"}]}]})
    )
    (tmp_path / "broken.jsonl").write_text("{oops\n")
    err = StringIO()
    with pytest.raises(CommandError, match="2 conversations were refused") as raised:
        call_command("ingest", "--project", "P", str(tmp_path), stdout=StringIO(), stderr=err)
    assert raised.value.returncode == 1
    assert "bad.json: invalid: $.turns[0].messages[0].role" in err.getvalue()
    assert "broken.jsonl:1: not valid JSON" in err.getvalue()
    assert Conversation.objects.count() == 1


def test_a_missing_path_is_an_error() -> None:
    with pytest.raises(CommandError, match="no such file"):
        _run("--project", "P", "/nowhere/at/all.json")
