"""The native format needs no conversion: validation and canonical form happen after."""

from typing import Any


def adapt(payload: Any) -> Any:
    return payload
