import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grounding_site.settings")
application = get_wsgi_application()

# Import every view now, as the server starts, rather than in the first request each worker
# serves: that request would otherwise wait the better part of a second (an OTLP exporter
# counts it against its export timeout).
import grounding_site.urls  # noqa: E402, F401
