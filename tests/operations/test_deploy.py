"""The web gateway as deploy/compose.yaml and deploy/k8s run it, read (no Docker engine or cluster
here): at least 2 replicas behind one way in, the same settings in both, its own secrets alone, and
deploy/k8s/validate.py refusing each way of getting that wrong (`make lint` runs it on the renderings;
here it runs on the base's manifests as written, with the ConfigMap made from config.env)."""

from __future__ import annotations

import copy
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BASE = DEPLOY / "k8s" / "base"
LOGS = {"LOG_FORMAT", "LOG_LEVEL"}  # k8s sets them from its ConfigMap; compose keeps the defaults


def _validate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("meldstream_k8s_validate", DEPLOY / "k8s" / "validate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


validate = _validate()


def _compose() -> dict[str, Any]:
    services: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    return services


def _base() -> list[dict[str, Any]]:
    """The base's objects as written, and the ConfigMap its generator makes of config.env."""
    objects = [
        o
        for path in sorted(BASE.glob("*.yaml"))
        if path.name != "kustomization.yaml"
        for o in yaml.safe_load_all(path.read_text())
        if o
    ]
    data = {}
    for line in (BASE / "config.env").read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            data[key] = value
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "meldstream-config"},
        "data": data,
    }
    return [*objects, config]


def _problems(objects: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    count, _ = validate.check("test", objects, [])  # no Kubernetes version: the schemas are make lint's
    lines = [line for line in capsys.readouterr().out.splitlines() if "ERROR" in line]
    assert count == len(lines)
    return lines


def _named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def _web(objects: list[dict[str, Any]]) -> dict[str, Any]:
    container: dict[str, Any] = _named(objects, "Deployment", "meldstream-web")["spec"]["template"]["spec"][
        "containers"
    ][0]
    return container


def test_compose_runs_two_gateways_behind_the_proxy_alone() -> None:
    services = _compose()
    web, proxy = services["web"], services["web-proxy"]
    assert web["deploy"]["replicas"] >= 2 and "ports" not in web
    assert web["build"]["args"]["SERVICE"] == "web"
    assert [p.split(":")[-1] for p in proxy["ports"]] == ["8080"] and "web" in proxy["depends_on"]
    caddy = (DEPLOY / "web-proxy" / "Caddyfile").read_text()
    upstream = re.search(r"dynamic a \{\s*name (\S+)\s*port (\d+)", caddy)
    assert upstream is not None
    assert upstream.groups() == ("web", web["environment"]["WEB_ADDRESS"].rpartition(":")[2])
    assert "lb_policy round_robin" in caddy and "sticky" not in caddy.split("lb_policy")[1].splitlines()[0]
    assert "{$MELDSTREAM_SITE" in caddy  # compose.tls.yaml names the site; the default is :8080
    assert "./web-proxy/Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]


def test_compose_gives_the_gateways_secrets_to_it_alone() -> None:
    services = _compose()
    for name, service in services.items():
        values = " ".join(str(v) for v in (service.get("environment") or {}).values())
        assert ("WEB_OIDC_CLIENT_SECRET" in values) == (name == "web"), name
        assert ("WEB_SERVICE_CREDENTIAL" in values) == (name == "web"), name
    assert services["web"]["environment"]["MELDSTREAM_SERVICE_CREDENTIAL"].startswith(
        "${WEB_SERVICE_CREDENTIAL:?"
    )


def test_compose_and_kubernetes_give_the_gateway_the_same_settings() -> None:
    in_compose = set(_compose()["web"]["environment"])
    in_kubernetes = {e["name"] for e in _web(_base())["env"]}
    assert in_kubernetes - in_compose == LOGS
    assert in_compose <= in_kubernetes


def test_the_base_is_valid_and_the_gateway_has_probes_replicas_and_its_own_secrets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    objects = _base()
    assert _problems(objects, capsys) == []
    web = _web(objects)
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"  # the image's `health ready`
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"  # and `health live`
    secrets = {
        (e["valueFrom"]["secretKeyRef"]["name"], e["name"])
        for e in web["env"]
        if "secretKeyRef" in (e.get("valueFrom") or {})
    }
    assert secrets == {
        ("meldstream-web-credential", "MELDSTREAM_SERVICE_CREDENTIAL"),
        ("meldstream-web-oidc", "WEB_OIDC_CLIENT_SECRET"),
    }


def _broken(change: str) -> list[dict[str, Any]]:
    objects = copy.deepcopy(_base())
    web = _web(objects)
    deployment = _named(objects, "Deployment", "meldstream-web")
    if change == "one replica":
        deployment["spec"]["replicas"] = 1
    elif change == "no readiness":
        del web["readinessProbe"]
    elif change == "liveness on the page":
        web["livenessProbe"]["httpGet"]["path"] = "/"
    elif change == "probe elsewhere":
        web["livenessProbe"]["httpGet"]["port"] = 9999
    elif change == "sticky":
        _named(objects, "Service", "meldstream-web")["spec"]["sessionAffinity"] = "ClientIP"
    elif change == "no service":
        objects.remove(_named(objects, "Service", "meldstream-web"))
    elif change == "secret in a ConfigMap":
        oidc = next(e for e in web["env"] if e["name"] == "WEB_OIDC_CLIENT_SECRET")
        oidc["valueFrom"] = {"configMapKeyRef": {"name": "meldstream-config", "key": "OIDC_CLIENT_ID"}}
    elif change == "engine reads the gateway's credential":
        engine = _named(objects, "Deployment", "meldstream-engine")["spec"]["template"]["spec"]["containers"][
            0
        ]
        credential = next(e for e in engine["env"] if e["name"] == "MELDSTREAM_SERVICE_CREDENTIAL")
        credential["valueFrom"]["secretKeyRef"]["name"] = "meldstream-web-credential"
    elif change == "a setting nothing reads":
        web["env"].append({"name": "WEB_PUBLIC_ORIGIN", "value": "https://games.example.com"})
    elif change == "an Ingress without tls":
        objects.append(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "metadata": {"name": "plain"},
                "spec": {
                    "rules": [
                        {
                            "host": "games.example.com",
                            "http": {
                                "paths": [
                                    {
                                        "path": "/",
                                        "pathType": "Prefix",
                                        "backend": {
                                            "service": {"name": "meldstream-web", "port": {"name": "http"}}
                                        },
                                    }
                                ]
                            },
                        }
                    ]
                },
            }
        )
    return objects


BROKEN = {
    "one replica": r"Deployment meldstream-web: runs 1 replica\(s\): at least 2",
    "no readiness": r"container web: no readinessProbe",
    "probe elsewhere": r"container web: livenessProbe asks port 9999",
    "liveness on the page": r"container web: livenessProbe asks '/', not the gateway's /healthz",
    "sticky": r"Service meldstream-web has sessionAffinity ClientIP: any replica serves any player",
    "no service": r"Deployment meldstream-web: no Service selects its pods",
    "secret in a ConfigMap": r"WEB_OIDC_CLIENT_SECRET does not come from a Secret",
    "engine reads the gateway's credential": r"Secret meldstream-web-credential is read by "
    r"Deployment meldstream-engine, Deployment meldstream-web",
    "a setting nothing reads": r"WEB_PUBLIC_ORIGIN is not read by meldstream_web.config",
    "an Ingress without tls": r"Ingress plain: host games.example.com has no tls entry",
}


@pytest.mark.parametrize("change", BROKEN)
def test_validate_refuses_the_gateway_deployed_wrong(change: str, capsys: pytest.CaptureFixture[str]) -> None:
    problems = _problems(_broken(change), capsys)
    assert any(re.search(BROKEN[change], line) for line in problems), problems
