"""Reporting: exports of findings and corrections, export jobs, the overview's figures and
charts, and the audit report as a PDF."""
