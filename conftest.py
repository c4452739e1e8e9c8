"""Root conftest: registers the harness that finds or starts Kafka and Redis (rummy_infra)."""

pytest_plugins = ["rummy_infra.pytest_plugin"]
