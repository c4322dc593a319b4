"""The audit report as a PDF: rendered with WeasyPrint, read back with pypdf (its pages and
text) and drawn as page images by PDFium (pypdfium2), written to test-results/ for a person
to look at. Both are Python packages from requirements.txt: no PDF tool from the system."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pypdfium2
import pytest
from django.conf import settings
from django.utils import timezone
from pypdf import PdfReader

from checks import review
from checks.models import Correction, Finding
from checks.reporting import figures, pdf

pytestmark = pytest.mark.django_db

OUT = Path(settings.BASE_DIR) / "test-results"


@pytest.fixture
def audited(ingest: Any, alice: Any, bob: Any) -> Any:
    for example in ("01", "04", "05", "07", "09", "10", "14"):
        ingest(example)
    count = Finding.objects.get(code="count_misstatement")
    review.record_decision(finding=count, reviewer=bob, verdict="confirmed", reason="The receipt says 3.")
    invented = Finding.objects.get(code="unsupported_value")
    review.record_decision(finding=invented, reviewer=alice, verdict="confirmed")
    review.record_decision(
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
    """The first pages of a PDF as PNGs under test-results/ (60 dpi), drawn by PDFium; each
    must have ink on it, so a blank page fails here."""
    OUT.mkdir(exist_ok=True)
    (OUT / f"{name}.pdf").write_bytes(pdf)
    for old in OUT.glob(f"{name}-*.png"):
        old.unlink()
    document = pypdfium2.PdfDocument(pdf)
    pages = []
    try:
        for index in range(min(first, len(document))):
            image = document[index].render(scale=60 / 72).to_pil()
            darkest, _ = image.convert("L").getextrema()
            assert darkest < 128, f"page {index + 1} of {name} is blank"
            path = OUT / f"{name}-{index + 1}.png"
            image.save(path)
            pages.append(path)
    finally:
        document.close()
    return pages


def _text(pdf: bytes) -> str:
    """The PDF's text, page after page, as pypdf extracts it."""
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


@pytest.mark.pdf
def test_the_project_report_renders_to_pages(client: Any, vic: Any, audited: Any) -> None:
    client.force_login(vic)
    response = client.get("/p/acme/report.pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    pdf = response.content
    assert pdf.startswith(b"%PDF-")
    assert len(PdfReader(io.BytesIO(pdf)).pages) >= 2
    pages = _pages(pdf, "audit-report-project")
    assert len(pages) >= 2 and all(p.stat().st_size > 5000 for p in pages)
    text = _text(pdf)
    assert "Audit report" in text and "Acme support" in text
    assert "count_misstatement" in text and "unsupported_value" in text
    assert "Confirmed by bob" in text and "The receipt says 3." in text
    assert "T-2041, T-2057 and T-2093" in text and "approved by alice" in text
    assert "No tool result of the conversation supports this claim." in text  # the invented id
    assert "Verified" in text and "chain intact" in text
    assert "failed_action_claimed" not in text.split("3. Confirmed findings")[1].split("4. Audit")[0]


@pytest.mark.pdf
def test_the_conversation_report_covers_one_conversation(client: Any, vic: Any, audited: Any) -> None:
    client.force_login(vic)
    response = client.get(f"/p/acme/conversations/{audited.conversation_id}/report.pdf")
    assert response.status_code == 200
    assert response.content.startswith(b"%PDF-")
    assert _pages(response.content, "audit-report-conversation", first=2)
    text = _text(response.content)
    assert "ex-count" in text and "count_misstatement" in text
    assert "unsupported_value" not in text


@pytest.mark.pdf
def test_a_broken_chain_is_reported(audited: Any, project: Any) -> None:
    from django.db import connection

    from tests.conftest import tampering_with_the_audit_log

    with tampering_with_the_audit_log(), connection.cursor() as cursor:  # tampering with the table directly
        cursor.execute(
            "UPDATE checks_auditevent SET after = '{}' WHERE id = (SELECT MIN(id) FROM checks_auditevent)"
        )
    document = pdf.render_pdf(project, period=figures.period_from({}))
    text = _text(document)
    assert "Not verified" in text and "NOT VERIFIED: broken at event" in text
    assert "chain intact" not in text


def test_hostile_text_is_printed_not_run(ingest: Any, bob: Any, project: Any, tmp_path: Path) -> None:
    from tests.conftest import load_example

    payload = load_example("05")
    payload["title"] = "<h1>Injected</h1>"
    payload["agent"] = {"name": "<img src=x>", "model": "m"}
    conversation = ingest(payload)
    finding = Finding.objects.get(code="count_misstatement")
    review.record_decision(finding=finding, reviewer=bob, verdict="confirmed", reason="<b>bold</b>")
    context = pdf.report_context(project, conversation=conversation)
    html = pdf.render_report_html(context)
    assert "<h1>Injected</h1>" not in html and "&lt;h1&gt;Injected&lt;/h1&gt;" in html
    assert "<b>bold</b>" not in html and "<img src=x>" not in html


def test_outsiders_get_404(client: Any, olga: Any, audited: Any) -> None:
    client.force_login(olga)
    assert client.get("/p/acme/report.pdf").status_code == 404
    assert client.get(f"/p/acme/conversations/{audited.conversation_id}/report.pdf").status_code == 404


def test_an_argument_finding_names_its_call_and_each_span_is_shown_once_highlighted(
    ingest: Any, bob: Any, project: Any
) -> None:
    """The report names the call and argument of an argument finding (not "the answer as a
    whole"), and shows an evidence span once, marked, in a little of its result."""
    from tests.conftest import load_example

    conversation = ingest(load_example("13"))
    argument = Finding.objects.filter(conversation=conversation, code="unsupported_argument").first()
    assert argument is not None
    review.record_decision(finding=argument, reviewer=bob, verdict="confirmed")
    html = pdf.render_report_html(pdf.report_context(project, conversation=conversation))
    details = argument.details
    assert f"The argument <code>{details['path']}</code>" in html
    assert f"<code>{details['tool']}</code>" in html and details["call_id"] in html
    assert "The answer as a whole." not in html

    evidenced = ingest(load_example("05"))
    confirmed = [f for f in Finding.objects.filter(conversation=evidenced) if f.evidence]
    assert confirmed
    finding = confirmed[0]
    finding.evidence = [*finding.evidence, *finding.evidence]  # the same span named twice
    finding.save(update_fields=["evidence"])
    review.record_decision(finding=finding, reviewer=bob, verdict="confirmed")
    entry = pdf._finding_entry(finding, pdf.stored_calls([finding]))
    spans = [e for e in entry["evidence"] if e["text"]]
    assert len(spans) == len({(e["call_id"], e["path"], e["span"]) for e in spans}) >= 1
    html = pdf.render_report_html(pdf.report_context(project, conversation=evidenced))
    from django.utils.html import escape

    assert html.count(f"<mark>{escape(spans[0]['text'])}</mark>") == 1
