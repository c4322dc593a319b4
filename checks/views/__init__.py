"""Server-rendered pages; htmx swaps the fragments each template defines with partialdef."""
