"""The shipped pod keeps its pins (issue 22, class 3): the manifests mount the config
read-only and give the sidecar a writable data folder of its own, and the bot pod's config
names it. Then, for real: the manifest's config started from a read-only bind mount (a
private mount namespace, `unshare -m`), once as shipped (pins kept in the data folder) and
once without `data.folder` (the old shape: first-sight tools held, one WARNING naming the
read-only folder). Its remote server is swapped for a local one: nothing here reaches out."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import open_raw
from tests.trust.test_pinning_e2e import BEFORE, SHIFTY

pytestmark = pytest.mark.timeout(120)

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "k8s"


def _pods() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(config, pod spec) of each manifest: the config its Secret carries, the Deployment that mounts it."""
    found = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
        secrets = {d["metadata"]["name"]: d for d in documents if d["kind"] == "Secret"}
        for deployment in (d for d in documents if d["kind"] == "Deployment"):
            spec = deployment["spec"]["template"]["spec"]
            for volume in spec.get("volumes", []):
                secret = secrets.get(volume.get("secret", {}).get("secretName", ""))
                for key, text in (secret or {}).get("stringData", {}).items():
                    if key.endswith(".json"):
                        found.append((json.loads(text), spec))
    return found


def test_each_pod_writes_its_pins_to_a_writable_folder_apart_from_the_read_only_config() -> None:
    pods = _pods()
    assert len(pods) == 2
    for config, spec in pods:
        container = next(c for c in spec["containers"] if "--config" in c.get("args", []))
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        config_folder = str(Path(container["args"][container["args"].index("--config") + 1]).parent)
        assert mounts[config_folder].get("readOnly") is True
        folder = config["data"]["folder"]
        assert folder != config_folder and mounts[folder].get("readOnly") is not True
        volume = next(v for v in spec["volumes"] if v["name"] == mounts[folder]["name"])
        assert "emptyDir" in volume or "persistentVolumeClaim" in volume


def _can_mount_read_only() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None and shutil.which("mount") is not None


def _pod_layout(tmp_path: Path, keep_data_folder: bool) -> tuple[Path, Path]:
    """The bot pod's volumes under `tmp_path`: its config (to be mounted read-only) and data folder."""
    config, _ = next((c, s) for c, s in _pods() if c["bot"]["id"] == "iris" and "gateway" not in c)
    etc, data = tmp_path / "etc" / "omb", tmp_path / "var" / "lib" / "omb"
    etc.mkdir(parents=True)
    data.mkdir(parents=True)
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(BEFORE))
    config["mcpServers"] = {"notes": {"command": sys.executable, "args": [str(SHIFTY), str(tools)]}}
    if keep_data_folder:
        config["data"]["folder"] = str(data)  # the emptyDir, where this test lays it out
    else:
        config.pop("data")
    (etc / "sidecar.json").write_text(json.dumps(config))
    return etc, data


def _read_only_argv(folder: Path) -> list[str]:
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", str(folder),
            sys.executable, "-m", "sidecar", "--config", str(folder / "sidecar.json"), "--log-level", "INFO"]


@pytest.mark.skipif(not _can_mount_read_only(), reason="needs root and unshare for a read-only bind mount")
async def test_the_shipped_config_on_a_read_only_mount_keeps_its_pins(tmp_path: Path) -> None:
    etc, data = _pod_layout(tmp_path, keep_data_folder=True)
    async with open_raw(_read_only_argv(etc)) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["notes__lookup", "notes__store"])
    health = json.loads((data / "mcp-health.json").read_text())
    assert set(health["notes"]["pins"]) >= {"lookup", "store"}
    assert "cannot be kept" not in sc.stderr
    assert not any(p.name.startswith("mcp-health") for p in etc.iterdir())


@pytest.mark.skipif(not _can_mount_read_only(), reason="needs root and unshare for a read-only bind mount")
async def test_without_a_data_folder_a_read_only_config_holds_first_sight_tools(tmp_path: Path) -> None:
    etc, _ = _pod_layout(tmp_path, keep_data_folder=False)
    async with open_raw(_read_only_argv(etc)) as sc:
        await sc.initialize()
        answer = await sc.call("notes__lookup", {"word": "x"})
        listed = await sc.request("tools/list", {})
    assert "is held by the sidecar" in json.dumps(answer) and f"could not keep tool pins in {etc}" in json.dumps(answer)
    assert not any(t["name"].startswith("notes__") for t in listed["result"]["tools"])
    warnings = [line for line in sc.stderr.splitlines() if "WARNING" in line and "cannot be kept" in line]
    assert len(warnings) == 1 and str(etc) in warnings[0], sc.stderr[-2000:]
