"""Check rendered Kubernetes manifests offline; run by deploy/k8s/validate.sh (`make lint`).

    python deploy/k8s/validate.py --kubernetes-version 1.31.0 [--kubernetes-version ...] NAME=FILE.yaml ...

Each object of each rendering (NAME: the kustomization it came from) must:
- validate against the JSON schema of its kind for every given Kubernetes version, strictly (an unknown
  field is an error), with the schemas shipped in the kubernetes-validate package: no network. A kind
  without a schema there (a typo, or a custom resource) is an error too.
- not be a Secret: the seed key, identity's key secret, matchmaking's forward secret and the
  credentials are created by hand
  (deploy/k8s/README.md).
Each container of a Deployment (named after its service folder, services/<name>: `web` is the gateway,
meldstream_web) must:
- set only environment variables its service reads (what `rummy_<name>.config.load(env)`, or
  `meldstream_web.config.load(env)`, asks `env` for, and what its process reads beside: LOG_LEVEL,
  LOG_FORMAT, <NAME>_METRICS_ADDRESS for a gRPC service, uvicorn's FORWARDED_ALLOW_IPS for the gateway),
  so the manifests hold no setting that does nothing; one that another variable's value uses as
  $(NAME) (the pod's IP from the downward API) is a part of that one;
- take every configMapKeyRef from a ConfigMap of the same rendering that has the key;
- take each secret its service reads (SECRET_VARIABLES) from a secretKeyRef, never
  a literal or a ConfigMap, and not set MELDSTREAM_DEV: the pods run in production mode, where a service
  without its secrets refuses to start;
- listen where it is probed: <NAME>_ADDRESS is set to 0.0.0.0:<containerPort>, any other *_ADDRESS is on a
  containerPort, and the grpc and httpGet probes ask a containerPort (by number or name);
- have a readiness and a liveness probe (the gateway's: HTTP on /readyz and /healthz).
Each Deployment must run at least MIN_REPLICAS of its component (the gateway: 2), and be selected by a
Service whose targetPort its pods have; a Service in front of the gateway has no session affinity (any
replica serves any player). Each Secret is read by one Deployment alone: no service holds a secret but
its own. Each Ingress serves only https (a tls entry for each of its hosts: the gateway's cookies are
Secure) and sends to a rendered Service's port.
Every problem is reported, naming the rendering and the object; the exit status is 1 if there was any.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import kubernetes_validate
import yaml
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError, VersionNotSupportedError
from rummy_service import logs

EXPANDS = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")  # Kubernetes' $(VAR) in an env value
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
SECRET_VARIABLES = (
    "ENGINE_SEED_KEY",
    "IDENTITY_KEY_SECRET",
    "MATCHMAKING_FORWARD_SECRET",
    "IDENTITY_SERVICE_CREDENTIALS",
    "MELDSTREAM_SERVICE_CREDENTIAL",
    "WEB_OIDC_CLIENT_SECRET",
)
GATEWAY: Final = "web"
# The package of each container (by name) whose `config.load` is asked: rummy_<name> unless named here.
PACKAGES: Final = {GATEWAY: "meldstream_web"}
# Read by the process beside its config: uvicorn's trust of X-Forwarded-* (the gateway behind a proxy).
PROCESS_READS: Final = {GATEWAY: frozenset({"FORWARDED_ALLOW_IPS"})}
# Given to `load` so it reads on into optional settings: with an issuer the gateway asks the rest of
# WEB_OIDC_* (without one it stops at the issuer).
EXPLORE: Final = {GATEWAY: {"WEB_OIDC_ISSUER": "https://id.example.com", "WEB_OIDC_CLIENT_ID": "lint"}}
MIN_REPLICAS: Final = {GATEWAY: 2}  # by container name; others at least 1
# The gateway's own health routes (meldstream_web/health.py), as the image's `meldstream-service health`
# asks them: readiness checks identity's keys and the engine, liveness only that the process answers.
HTTP_PROBE_PATHS: Final = {GATEWAY: {"readinessProbe": "/readyz", "livenessProbe": "/healthz"}}

Object = dict[str, Any]


def name_of(obj: Object) -> str:
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind', '?')} {where}{meta.get('name', '?')}"


class Asked(Mapping[str, str]):
    """An environment that notes every variable asked of it. It holds only MELDSTREAM_DEV=1, so `load`
    takes the development secrets instead of refusing their absence, and reads on to the end."""

    GIVEN: Final = {"MELDSTREAM_DEV": "1"}

    def __init__(self, extra: Mapping[str, str] | None = None) -> None:
        self.names: set[str] = set()
        self.given = {**self.GIVEN, **(extra or {})}

    def __getitem__(self, name: str) -> str:
        self.names.add(name)
        if name in self.given:
            return self.given[name]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        self.names.add(str(name))
        return name in self.given

    def __iter__(self) -> Iterator[str]:
        return iter(self.given)

    def __len__(self) -> int:
        return len(self.given)


def package(service: str) -> str:
    return PACKAGES.get(service, f"rummy_{service}")


def variables_read(service: str) -> set[str] | None:
    """The environment variables service <service> reads: what `<package>.config.load` asks for
    (every service takes its environment as a mapping there). None: no such module in this virtualenv."""
    try:
        config = importlib.import_module(f"{package(service)}.config")
    except ModuleNotFoundError:
        return None
    env = Asked(EXPLORE.get(service))
    config.load(env)
    # Read by the process runner (rummy_service.process), not the config: logging, and /metrics for the
    # gRPC services (the gateway serves none).
    metrics = set() if service in PACKAGES else {f"{service.upper()}_METRICS_ADDRESS"}
    return env.names | set(logs.VARIABLES) | metrics | PROCESS_READS.get(service, frozenset())


def schema_errors(obj: Object, versions: list[str]) -> Iterator[str]:
    for version in versions:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except ValidationError as exc:
            path = ".".join(str(p) for p in exc.path) or "(top level)"
            yield f"Kubernetes {version}: {path}: {exc.message}"
        except SchemaNotFoundError as exc:
            yield f"Kubernetes {version}: {exc.message} (a typo, or a custom resource: not validated here)"


def container_errors(container: Object, config_maps: dict[str, Object], secrets: set[str]) -> Iterator[str]:
    name = container.get("name", "?")
    reads = variables_read(name)
    if reads is None:
        yield f"container {name}: no module {package(name)}.config to check its environment against"
        reads = set()
    ports = [p["containerPort"] for p in container.get("ports", [])]
    port_names = [p["name"] for p in container.get("ports", []) if "name" in p]
    envs = container.get("env", [])
    listen = f"{name.upper()}_ADDRESS"
    expanded = {name for e in envs for name in EXPANDS.findall(str(e.get("value", "")))}
    for env in envs:
        var = env["name"]
        if reads and var not in reads and var not in expanded:
            yield f"container {name}: {var} is not read by {package(name)}.config"
        ref = (env.get("valueFrom") or {}).get("configMapKeyRef")
        if ref is not None:
            data = config_maps.get(ref["name"])
            if data is None:
                yield f"container {name}: {var} from ConfigMap {ref['name']}, which is not rendered"
            elif ref["key"] not in data and not ref.get("optional"):
                yield f"container {name}: {var} from ConfigMap {ref['name']} key {ref['key']}, which it lacks"
        secret = (env.get("valueFrom") or {}).get("secretKeyRef")
        if secret is not None:
            secrets.add(f"{secret['name']}/{secret['key']}")
        if var.endswith("_ADDRESS") and "value" in env:
            host, _, port = env["value"].rpartition(":")
            if not port.isdigit() or int(port) not in ports:
                yield f"container {name}: {var}={env['value']} is not on a containerPort {ports}"
            if var == listen and host != "0.0.0.0":
                yield f"container {name}: {var}={env['value']} is not 0.0.0.0 (every address of the pod)"
    if reads and listen in reads and listen not in {e["name"] for e in envs}:
        yield f"container {name}: {listen} is not set (its default listens on loopback only)"
    by_name = {e["name"]: e for e in envs}
    if "MELDSTREAM_DEV" in by_name:
        yield f"container {name}: MELDSTREAM_DEV is set: pods run in production mode, with real secrets"
    for var in SECRET_VARIABLES:
        if var in reads and "secretKeyRef" not in (by_name.get(var, {}).get("valueFrom") or {}):
            yield f"container {name}: {var} does not come from a Secret (secretKeyRef): it must, and be set"
    for probe in PROBES:
        grpc = (container.get(probe) or {}).get("grpc")
        if grpc is not None and grpc.get("port") not in ports:
            yield f"container {name}: {probe} asks port {grpc.get('port')}, not a containerPort {ports}"
        http = (container.get(probe) or {}).get("httpGet")
        if http is not None and http.get("port") not in [*ports, *port_names]:
            yield f"container {name}: {probe} asks port {http.get('port')}, not a containerPort {ports}"
    for probe in ("readinessProbe", "livenessProbe"):
        if not container.get(probe):
            yield f"container {name}: no {probe}"
    for probe, path in HTTP_PROBE_PATHS.get(name, {}).items():
        asked = ((container.get(probe) or {}).get("httpGet") or {}).get("path")
        if container.get(probe) and asked != path:
            yield f"container {name}: {probe} asks {asked!r}, not the gateway's {path}"


def labels_match(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def deployment_errors(obj: Object, services: list[Object]) -> Iterator[str]:
    """Replicas, and a Service in front whose targetPort the pods have (no affinity for the gateway)."""
    template = obj["spec"]["template"]
    labels = (template.get("metadata") or {}).get("labels") or {}
    containers = template["spec"].get("containers", [])
    names = {c.get("name", "") for c in containers}
    replicas = obj["spec"].get("replicas", 1)
    least = max([MIN_REPLICAS.get(n, 1) for n in names] or [1])
    if replicas < least:
        yield f"runs {replicas} replica(s): at least {least} (any replica serves any request)"
    ports = {p.get(key) for c in containers for p in c.get("ports", []) for key in ("name", "containerPort")}
    fronts = [s for s in services if labels_match((s.get("spec") or {}).get("selector") or {}, labels)]
    if not fronts:
        yield "no Service selects its pods"
    for service in fronts:
        spec = service.get("spec") or {}
        for port in spec.get("ports", []):
            if port.get("targetPort", port.get("port")) not in ports:
                yield f"{name_of(service)} targets port {port.get('targetPort')}, which its pods lack"
        if GATEWAY in names and spec.get("sessionAffinity", "None") != "None":
            affinity = spec["sessionAffinity"]
            yield f"{name_of(service)} has sessionAffinity {affinity}: any replica serves any player"


def ingress_errors(obj: Object, services: list[Object]) -> Iterator[str]:
    """https only (a tls entry for each host), and backends that are rendered Services' ports."""
    spec = obj.get("spec") or {}
    covered = {host for tls in spec.get("tls", []) for host in tls.get("hosts", [])}
    ports = {
        (s["metadata"]["name"], p.get(key))
        for s in services
        for p in (s.get("spec") or {}).get("ports", [])
        for key in ("name", "port")
    }
    backends = [spec["defaultBackend"]] if "defaultBackend" in spec else []
    for rule in spec.get("rules", []):
        if rule.get("host") not in covered:
            yield f"host {rule.get('host', '(any)')} has no tls entry: the gateway's cookies need https"
        backends += [path.get("backend", {}) for path in (rule.get("http") or {}).get("paths", [])]
    if not spec.get("tls"):
        yield "no tls: the gateway's cookies are Secure, so browsers need https"
    for backend in backends:
        service = backend.get("service") or {}
        port = service.get("port") or {}
        target = (service.get("name"), port.get("name", port.get("number")))
        if target not in ports:
            yield f"backend {target[0]}:{target[1]} is not a rendered Service's port"


def check(rendering: str, objects: list[Object], versions: list[str]) -> tuple[int, set[str]]:
    """Print every problem of one rendering; the number of problems and the Secret keys it expects."""
    problems = 0
    secrets: set[str] = set()
    config_maps = {
        (o.get("metadata") or {}).get("name", ""): o.get("data") or {}
        for o in objects
        if o.get("kind") == "ConfigMap"
    }

    services = [o for o in objects if o.get("kind") == "Service"]
    readers: dict[str, set[str]] = {}  # Secret name: the Deployments that read it
    for obj in objects:
        errors = list(schema_errors(obj, versions))
        if obj.get("kind") == "Secret":
            errors.append("a Secret is rendered: secrets are created by hand (deploy/k8s/README.md)")
        if obj.get("kind") == "Deployment":
            pod = obj["spec"]["template"]["spec"]
            own: set[str] = set()
            for container in pod.get("containers", []):
                errors.extend(container_errors(container, config_maps, own))
            errors.extend(deployment_errors(obj, services))
            secrets |= own
            for key in own:
                readers.setdefault(key.partition("/")[0], set()).add(name_of(obj))
        if obj.get("kind") == "Ingress":
            errors.extend(ingress_errors(obj, services))
        for error in errors:
            print(f"k8s: ERROR {rendering}: {name_of(obj)}: {error}", flush=True)
        problems += len(errors)
    for secret, deployments in sorted(readers.items()):
        if len(deployments) > 1:
            print(
                f"k8s: ERROR {rendering}: Secret {secret} is read by {', '.join(sorted(deployments))}: "
                "each service holds its own secrets alone",
                flush=True,
            )
            problems += 1
    return problems, secrets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubernetes-version", action="append", required=True, dest="versions")
    parser.add_argument("renderings", nargs="+", metavar="NAME=FILE")
    args = parser.parse_args()
    total = 0
    count = 0
    for item in args.renderings:
        rendering, _, path = item.partition("=")
        try:
            objects = [o for o in yaml.safe_load_all(Path(path).read_text()) if o]
        except yaml.YAMLError as exc:
            print(f"k8s: ERROR {rendering}: the rendered YAML does not parse: {exc}", flush=True)
            total += 1
            continue
        if not objects:
            print(f"k8s: ERROR {rendering}: renders no objects", flush=True)
            total += 1
            continue
        try:
            problems, secrets = check(rendering, objects, args.versions)
        except VersionNotSupportedError as exc:
            print(f"k8s: kubernetes-validate {kubernetes_validate.__version__}: {exc.message}", flush=True)
            return 2
        total += problems
        count += len(objects)
        kinds = ", ".join(sorted({str(o.get("kind")) for o in objects}))
        needs = f"; expects Secrets {', '.join(sorted(secrets))}" if secrets else ""
        print(f"k8s: {rendering}: {len(objects)} objects ({kinds}){needs}")
    versions = ", ".join(args.versions)
    if total:
        print(f"k8s: FAILED: {total} problem(s) (Kubernetes {versions}); see the lines above", flush=True)
        return 1
    print(f"k8s: {count} objects valid against Kubernetes {versions} (kubernetes-validate, offline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
