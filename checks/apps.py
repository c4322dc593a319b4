from django.apps import AppConfig


class ChecksConfig(AppConfig):
    name = "checks"
    verbose_name = "Receipts"

    def ready(self) -> None:
        from .api import schema  # noqa: F401  (registers the schema's auth description)
        from .views import auth  # noqa: F401  (connects the sign-in limiter and its audit)
