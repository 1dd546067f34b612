"""deploy/: the Kubernetes manifests pass an offline schema validator (kubernetes-validate,
strict), the configs they carry are valid sidecar configs whose servers all mount, and the
image definition copies what exists and starts the CLI with options it has."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from sidecar.cli import _serve_parser
from sidecar.config import parse_config
from sidecar.config.bots import for_bot
from sidecar.mounts.plan import plan_mounts

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
MANIFESTS = sorted((DEPLOY / "k8s").glob("*.yaml"))


def documents() -> list[dict[str, Any]]:
    return [d for path in MANIFESTS for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("document", documents(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_each_manifest_is_valid_for_kubernetes(document: dict[str, Any]) -> None:
    kubernetes_validate.validate(document, "1.37.0", strict=True)


def test_both_shapes_are_there() -> None:
    kinds = {(d["kind"], d["metadata"]["name"]) for d in documents()}
    assert {("Deployment", "omb-bot-iris"), ("Deployment", "omb-gateway"), ("Service", "omb-gateway"),
            ("Deployment", "omb-redis"), ("NetworkPolicy", "omb-gateway-from-engines")} <= kinds
    gateway = next(d for d in documents() if d["metadata"]["name"] == "omb-gateway" and d["kind"] == "Deployment")
    container = gateway["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    assert container["resources"]["requests"]["cpu"] and container["resources"]["requests"]["memory"]


def test_the_carried_configs_are_valid_and_every_server_mounts() -> None:
    secrets = [d for d in documents() if d["kind"] == "Secret"]
    configs = [json.loads(v) for d in secrets for k, v in d["stringData"].items() if k.endswith(".json")]
    assert len(configs) == 2
    for document in configs:
        config = parse_config(document, {})
        assert not config.skipped
        cuts = [for_bot(config, bot) for bot in config.gateway.bots] or [config]
        for cut in cuts:
            assert not plan_mounts(cut.servers, {}).left_out


def test_the_image_copies_what_exists_and_uses_real_options() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    root = DEPLOY.parent
    for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.MULTILINE):
        for source in line.split()[:-1]:
            assert (root / source).exists(), source
    copied = {line.split()[0] for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.MULTILINE)}
    packed = {p.rstrip("*") for p in tomllib.loads((root / "pyproject.toml").read_text())
              ["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert packed <= copied, "the image builds its wheel from every package: " + ", ".join(sorted(packed - copied))
    options = {o for action in _serve_parser()._actions for o in action.option_strings}
    for argv in re.findall(r"^CMD (\[.+\])$", text, re.MULTILINE):
        assert {a for a in json.loads(argv) if a.startswith("--")} <= options
