"""The deployment files (deploy/), checked as far as this machine can without a container
engine: the compose file parses and names what exists, the image definition installs what
the project declares, the systemd unit passes ``systemd-analyze verify``, and every setting
they give is one ``semps serve`` accepts."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from semps_test_support import PATIENCE

from semps.cli import _build_parser
from semps.settings import SETTINGS, build_settings, read_toml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETTING_VARS = {s.env for s in SETTINGS}


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of deploy/Dockerfile, continuation lines joined."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in dockerfile():
        if word == "ENV":
            for item in shlex.split(rest):
                key, _, value = item.partition("=")
                env[key] = value
    return env


def semps_settings(env: dict[str, str]) -> None:
    """Every SEMPS_* variable is a setting and its value is accepted."""
    given = {k: v for k, v in env.items() if k.startswith("SEMPS_") and "${" not in v}
    unknown = {k for k in given if k not in SETTING_VARS | {"SEMPS_SPARK_MASTER"}}
    assert not unknown, unknown
    build_settings({}, environ={k: v for k, v in given.items() if k in SETTING_VARS})


def pyspark_home() -> Path:
    pyspark = pytest.importorskip("pyspark")
    return Path(pyspark.__file__).parent


# -- compose ------------------------------------------------------------------------------


def test_compose_runs_the_broker_and_a_spark_master_and_worker() -> None:
    doc = compose()
    services = doc["services"]
    assert {"broker", "spark-master", "spark-worker"} <= set(services)
    images = {s["image"] for s in services.values()}
    assert images == {f"semps:{PYPROJECT['project']['version']}"}
    build = services["broker"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    for service in services.values():
        for volume in service.get("volumes", []):
            name = volume.split(":")[0]
            assert name.startswith(".") or name in doc["volumes"], name


def test_compose_settings_are_settings_serve_accepts() -> None:
    for name, service in compose()["services"].items():
        semps_settings({k: str(v) for k, v in service.get("environment", {}).items()})
        if service.get("entrypoint") is None and "command" in service:  # semps itself
            args = service["command"]
            assert _build_parser(args).parse_args(args).command == args[0], name


def test_the_worker_joins_the_master_the_compose_file_starts() -> None:
    services = compose()["services"]
    master = services["spark-master"]["command"]
    worker = services["spark-worker"]["command"]
    host = master[master.index("--host") + 1]
    port = master[master.index("--port") + 1]
    assert host == "spark-master"
    assert f"spark://{host}:{port}" in worker
    assert services["bulk"]["environment"]["SEMPS_SPARK_MASTER"] == f"spark://{host}:{port}"


def test_the_spark_daemons_exist_in_the_installed_pyspark() -> None:
    home = pyspark_home()
    assert (home / "bin" / "spark-class").is_file()
    classes = set()
    for jar in (home / "jars").glob("spark-core_*.jar"):
        with zipfile.ZipFile(jar) as z:
            classes |= {n[:-6].replace("/", ".") for n in z.namelist() if n.endswith(".class")}
    for name in ("spark-master", "spark-worker"):
        service = compose()["services"][name]
        assert service["entrypoint"] == ["spark-class"]
        assert service["command"][0] in classes


# -- the image ----------------------------------------------------------------------------


def test_the_image_installs_the_project_with_its_spark_extra() -> None:
    instructions = dockerfile()
    (base,) = [rest for word, rest in instructions if word == "FROM"]
    version = base.split(":")[1].split("-")[0]
    assert PYPROJECT["project"]["requires-python"] == ">=3.11" and version == "3.11"
    env = image_env()
    assert env["SPARK_HOME"] == f"/opt/semps/lib/python{version}/site-packages/pyspark"
    runs = " ".join(rest for word, rest in instructions if word == "RUN")
    assert '"/src[spark]"' in runs and "spark" in PYPROJECT["project"]["optional-dependencies"]
    (entry,) = [json.loads(rest) for word, rest in instructions if word == "ENTRYPOINT"]
    assert entry == ["semps"] and "semps" in PYPROJECT["project"]["scripts"]
    (cmd,) = [json.loads(rest) for word, rest in instructions if word == "CMD"]
    assert _build_parser(cmd).parse_args(cmd).command == "serve"
    semps_settings(env)
    assert ("USER", "semps") in instructions


def test_the_health_check_calls_the_health_route() -> None:
    from semps.api.app import create_app  # noqa: F401 (the route is declared there)

    (check,) = [rest for word, rest in dockerfile() if word == "HEALTHCHECK"]
    assert "http://127.0.0.1:8000/health" in check
    assert image_env()["SEMPS_PORT"] == "8000"


def test_the_build_context_keeps_what_the_install_needs() -> None:
    ignored = [
        line.strip()
        for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    needed = ["pyproject.toml", "README.md", "semps"]
    assert (ROOT / "semps" / "broker" / "__init__.py").is_file()
    for path in needed:
        assert (ROOT / path).exists()
        assert path not in ignored
    assert ".venv" in ignored and ".git" in ignored


# -- systemd ------------------------------------------------------------------------------


def unit() -> str:
    return (DEPLOY / "semps.service").read_text()


def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    here = Path(sys.executable).parent / "semps"
    local = tmp_path / "semps.service"
    local.write_text(unit().replace("/opt/semps/.venv/bin/semps", str(here)))
    out = subprocess.run(
        ["systemd-analyze", "verify", str(local)], capture_output=True, text=True, timeout=PATIENCE
    )
    assert out.returncode == 0, out.stderr
    assert "semps.service" not in out.stderr, out.stderr  # unknown keys are only warnings


def test_the_unit_runs_serve_with_the_example_settings() -> None:
    lines = [line for line in unit().splitlines() if "=" in line and not line.startswith("#")]
    values = dict(line.split("=", 1) for line in lines if line.split("=")[0] != "Environment")
    exec_start = shlex.split(values["ExecStart"])
    assert exec_start[0] == "/opt/semps/.venv/bin/semps"
    args = _build_parser(exec_start[1:]).parse_args(exec_start[1:])
    assert args.command == "serve" and str(args.config) == "/etc/semps/semps.toml"
    env = dict(
        line.split("=", 1)[1].split("=", 1) for line in lines if line.startswith("Environment=")
    )
    semps_settings(env)
    assert values["UMask"] == "0077" and values["StateDirectoryMode"] == "0700"


def test_the_example_settings_file_is_valid() -> None:
    values = read_toml(DEPLOY / "semps.toml")
    settings = build_settings({"config": str(DEPLOY / "semps.toml")}, environ={})
    assert settings.data_dir == Path("/var/lib/semps") and settings.retain_age == 30 * 86400
    assert set(values) <= {s.name for s in SETTINGS}


def test_building_the_package_metadata_prints_no_deprecation(tmp_path: Path) -> None:
    code = "import setuptools.build_meta as b, sys; b.prepare_metadata_for_build_wheel(sys.argv[1])"
    out = subprocess.run(
        [sys.executable, "-W", "always", "-c", code, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert out.returncode == 0, out.stderr
    assert "deprecat" not in (out.stdout + out.stderr).lower(), out.stderr
    (metadata,) = tmp_path.glob("*.dist-info/METADATA")
    assert "License-Expression: Apache-2.0" in metadata.read_text()
