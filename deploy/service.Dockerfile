# One image recipe for every service, built from the repository root so the image gets libs/ and the
# protos it generates code from (nothing generated is committed):
#   docker build -f deploy/service.Dockerfile --build-arg SERVICE=engine -t meldstream-engine .
# SERVICE is the folder under services/ (engine, matchmaking, scoring); the image runs `python -m rummy_<SERVICE>`,
# configured by environment variables only (services/<name>/src/*/config.py).
FROM python:3.11-slim
ARG SERVICE
WORKDIR /app
COPY requirements/lock.txt requirements/lock.txt
RUN pip install --no-cache-dir -r requirements/lock.txt
COPY protos protos
COPY libs libs
COPY services/${SERVICE} services/${SERVICE}
RUN python -m grpc_tools.protoc -I protos --python_out=libs/rummy_proto/src --grpc_python_out=libs/rummy_proto/src \
        $(find protos -name '*.proto') \
    && pip install --no-cache-dir --no-deps libs/rummy_rules libs/rummy_proto libs/rummy_store \
        libs/rummy_service libs/rummy_client services/${SERVICE}
ENV SERVICE_MODULE=rummy_${SERVICE} PYTHONUNBUFFERED=1
# exec: the service itself receives SIGTERM and stops cleanly (rummy_service.process).
CMD ["sh", "-c", "exec python -m \"$SERVICE_MODULE\""]
