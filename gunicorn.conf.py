"""Read by gunicorn from the directory it starts in (the Procfile's ``web`` line runs in the
checkout); the command line's options stand beside these."""


def post_worker_init(worker: object) -> None:
    # Each worker connects to the database, Redis and the broker now, not in its first request.
    from grounding_site import warm

    warm.web_worker()


def post_request(worker: object, req: object, environ: dict[str, object], resp: object) -> None:
    # An OTLP export's body and what was read of it are freed by now; give the pages back.
    from grounding_site import memory

    try:
        size = int(str(environ.get("CONTENT_LENGTH") or 0))
    except ValueError:
        size = 0
    if size >= memory.LARGE_BODY_BYTES:
        memory.release()
