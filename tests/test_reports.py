"""The audit report as a PDF: rendered with WeasyPrint, turned into page images by pdftoppm
(written to test-results/ for a person or a browser test to look at)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from checks import reports, services
from checks.models import Correction, Finding

pytestmark = pytest.mark.django_db

OUT = Path(settings.BASE_DIR) / "test-results"


@pytest.fixture
def audited(ingest: Any, alice: Any, bob: Any) -> Any:
    for example in ("01", "04", "05", "07", "09", "10", "14"):
        ingest(example)
    count = Finding.objects.get(code="count_misstatement")
    services.record_decision(finding=count, reviewer=bob, verdict="confirmed", reason="The receipt says 3.")
    invented = Finding.objects.get(code="unsupported_value")
    services.record_decision(finding=invented, reviewer=alice, verdict="confirmed")
    services.record_decision(
        finding=Finding.objects.get(code="failed_action_claimed"), reviewer=bob, verdict="dismissed"
    )
    Correction.objects.create(
        project=count.project,
        finding=count,
        text="The search returned 3 open tickets about the VPN: T-2041, T-2057 and T-2093.",
        author=bob,
        approver=alice,
        state="approved",
        decided_at=timezone.now(),
    )
    return count


def _pages(pdf: bytes, name: str, first: int = 3) -> list[Path]:
    """The first pages of a PDF as PNGs under test-results/, made by pdftoppm."""
    if shutil.which("pdftoppm") is None:
        pytest.fail("pdftoppm is missing: install poppler-utils (.ci/run does)")
    OUT.mkdir(exist_ok=True)
    source = OUT / f"{name}.pdf"
    source.write_bytes(pdf)
    for old in OUT.glob(f"{name}-*.png"):
        old.unlink()
    subprocess.run(
        ["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", str(first), str(source), str(OUT / name)],
        check=True,
        timeout=120,
    )
    return sorted(OUT.glob(f"{name}-*.png"))


def _text(pdf: bytes, tmp_path: Path) -> str:
    source = tmp_path / "r.pdf"
    source.write_bytes(pdf)
    return subprocess.run(
        ["pdftotext", "-layout", str(source), "-"], check=True, capture_output=True, text=True, timeout=120
    ).stdout


def test_the_project_report_renders_to_pages(client: Any, vic: Any, audited: Any, tmp_path: Path) -> None:
    client.force_login(vic)
    response = client.get("/p/acme/report.pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    pdf = response.content
    assert pdf.startswith(b"%PDF-")
    pages = _pages(pdf, "audit-report-project")
    assert len(pages) >= 2 and all(p.stat().st_size > 5000 for p in pages)
    text = _text(pdf, tmp_path)
    assert "Audit report" in text and "Acme support" in text
    assert "count_misstatement" in text and "unsupported_value" in text
    assert "Confirmed by bob" in text and "The receipt says 3." in text
    assert "T-2041, T-2057 and T-2093" in text and "approved by alice" in text
    assert "No tool result of the conversation supports this claim." in text  # the invented id
    assert "Verified" in text and "chain intact" in text
    assert "failed_action_claimed" not in text.split("3. Confirmed findings")[1].split("4. Audit")[0]


def test_the_conversation_report_covers_one_conversation(
    client: Any, vic: Any, audited: Any, tmp_path: Path
) -> None:
    client.force_login(vic)
    response = client.get(f"/p/acme/conversations/{audited.conversation_id}/report.pdf")
    assert response.status_code == 200
    _pages(response.content, "audit-report-conversation", first=2)
    text = _text(response.content, tmp_path)
    assert "ex-count" in text and "count_misstatement" in text
    assert "unsupported_value" not in text


def test_a_broken_chain_is_reported(audited: Any, project: Any, tmp_path: Path) -> None:
    from django.db import connection

    from tests.conftest import tampering_with_the_audit_log

    with tampering_with_the_audit_log(), connection.cursor() as cursor:  # tampering with the table directly
        cursor.execute(
            "UPDATE checks_auditevent SET after = '{}' WHERE id = (SELECT MIN(id) FROM checks_auditevent)"
        )
    pdf = reports.render_pdf(project, period=reports.period_from({}))
    text = _text(pdf, tmp_path)
    assert "Not verified" in text


def test_hostile_text_is_printed_not_run(ingest: Any, bob: Any, project: Any, tmp_path: Path) -> None:
    from tests.conftest import load_example

    payload = load_example("05")
    payload["title"] = "<h1>Injected</h1>"
    payload["agent"] = {"name": "<img src=x>", "model": "m"}
    conversation = ingest(payload)
    finding = Finding.objects.get(code="count_misstatement")
    services.record_decision(finding=finding, reviewer=bob, verdict="confirmed", reason="<b>bold</b>")
    context = reports.report_context(project, conversation=conversation)
    html = reports.render_report_html(context)
    assert "<h1>Injected</h1>" not in html and "&lt;h1&gt;Injected&lt;/h1&gt;" in html
    assert "<b>bold</b>" not in html and "<img src=x>" not in html


def test_outsiders_get_404(client: Any, olga: Any, audited: Any) -> None:
    client.force_login(olga)
    assert client.get("/p/acme/report.pdf").status_code == 404
    assert client.get(f"/p/acme/conversations/{audited.conversation_id}/report.pdf").status_code == 404
