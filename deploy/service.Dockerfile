# syntax=docker/dockerfile:1
# One image recipe for every service, the web gateway, and the meldstream command, built from the
# repository root so the image gets libs/ and the protos it generates code from (nothing generated is committed):
#   docker build -f deploy/service.Dockerfile --build-arg SERVICE=engine -t meldstream-engine .
#   docker build -f deploy/service.Dockerfile --build-arg SERVICE=web -t meldstream-web .
# SERVICE (identity, engine, matchmaking, scoring, or web: the gateway meldstream_web) is what the
# container runs: `meldstream-service run` (deploy/image/meldstream-service) execs `python -m
# rummy_<SERVICE>`, or `python -m meldstream_web` for web, configured by environment variables only
# (services/<name>/src/*/config.py). Every image holds every package, so the meldstream command works in
# any of them against the cluster, e.g.
#   docker compose -f deploy/compose.yaml exec engine meldstream verify GAME --kafka kafka:9092 --redis redis://redis:6379/0
#
# Two stages. `build` has protoc (grpcio-tools, pinned as requirements/lock.txt pins it), generates the
# Python code of protos/ and builds a wheel of each local package. The runtime stage installs only
# requirements/runtime.txt (no compiler, protoc, mypy, ruff or pytest) and those wheels, checks the set is
# complete (pip check), and runs as an unprivileged user (uid 10001, as deploy/k8s runs it). Its
# HEALTHCHECK is `meldstream-service health`: a service's gRPC health, over TLS when TLS_CA_FILE is set
# (meldstream_cli.health), or the gateway's HTTP answer on WEB_ADDRESS.
# Not built on the development machine (no Docker engine there): tests/operations/test_image.py reads it
# and runs deploy/image/meldstream-service as the image would.

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY requirements/lock.txt requirements/lock.txt
RUN pip install --no-cache-dir "$(grep -i '^grpcio-tools==' requirements/lock.txt)"
COPY protos protos
COPY libs libs
COPY services services
RUN python -m grpc_tools.protoc -I protos --python_out=libs/rummy_proto/src --grpc_python_out=libs/rummy_proto/src \
        $(find protos -name '*.proto') \
    && find libs/rummy_proto/src/rummy -type d -exec touch {}/py.typed \; \
    && pip wheel --no-cache-dir --no-deps --wheel-dir /wheels libs/*/ services/*/

FROM ${PYTHON_IMAGE}
ARG SERVICE=engine
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 MELDSTREAM_SERVICE=${SERVICE}
COPY requirements/runtime.txt /tmp/runtime.txt
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-deps -r /tmp/runtime.txt /wheels/*.whl \
    && pip check \
    && rm /tmp/runtime.txt \
    && groupadd --system --gid 10001 meldstream \
    && useradd --system --uid 10001 --gid meldstream --home-dir /data --create-home --shell /usr/sbin/nologin meldstream
COPY --chmod=0755 deploy/image/meldstream-service /usr/local/bin/meldstream-service
# The embedded store's default (.local/) lands here if a container runs without Kafka; on Kafka and Redis
# the services write no files, and the root filesystem may be read-only.
WORKDIR /data
USER 10001:10001
# gRPC: engine, matchmaking, scoring, identity; HTTP: the web gateway; Prometheus /metrics.
EXPOSE 50051 50052 50053 50054 8080 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["meldstream-service", "health"]
# It execs the service: the service itself receives SIGTERM and stops cleanly (rummy_service.process).
CMD ["meldstream-service", "run"]
