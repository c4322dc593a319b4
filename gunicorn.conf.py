"""Read by gunicorn from the directory it starts in (the Procfile's ``web`` line runs in the
checkout); the command line's options stand beside these."""


def post_worker_init(worker: object) -> None:
    # Each worker connects to the database, Redis and the broker now, not in its first request.
    from grounding_site import warm

    warm.web_worker()
