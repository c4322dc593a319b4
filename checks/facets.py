"""The values the queue's filter lists offer: each distinct code, agent and model of a project.

A plain ``SELECT DISTINCT`` reads every row of the project (every finding, for the codes:
hundreds of thousands at a million turns). A project has a few dozen distinct values, so
instead each list asks an index on (project, column) for the smallest value, then for the
smallest value after that one, and so on: one index probe per value, whatever the row count.
The walk is a recursive query in SQL that SQLite and PostgreSQL both run.
"""

from __future__ import annotations

from django.db import connection


def _walk(table: str, column: str) -> str:
    """The recursive query that lists ``column``'s distinct values within one project.

    Only ever called with the fixed table and column names of ``_QUERIES``; a request's values
    reach the query as parameters."""
    return (
        "WITH RECURSIVE found(value) AS ("  # noqa: S608 (names fixed below, never from a request)
        f" SELECT MIN({column}) FROM {table} WHERE project_id = %s"
        " UNION ALL"
        f" SELECT (SELECT MIN({column}) FROM {table} WHERE project_id = %s AND {column} > found.value)"
        " FROM found WHERE found.value IS NOT NULL"
        ") SELECT value FROM found WHERE value IS NOT NULL"
    )


# Built once from these fixed names, never from a request; each needs its index (models.py).
_QUERIES = {
    "code": _walk("checks_finding", "code"),
    "agent": _walk("checks_conversation", "agent_name"),
    "model": _walk("checks_conversation", "agent_model"),
}


def distinct_values(project_id: int, facet: str) -> list[str]:
    """The project's distinct non-empty values of ``facet`` (code, agent or model), sorted."""
    with connection.cursor() as cursor:
        cursor.execute(_QUERIES[facet], [project_id, project_id])
        return [value for (value,) in cursor.fetchall() if value]
