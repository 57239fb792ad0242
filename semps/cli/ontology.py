"""``semps ontology``: repair a data directory's ontology while the service is stopped.

``semps ontology reset --data-dir DIR`` empties the ontology of a data directory whose
stored ontology ``semps serve`` refuses (it breaks a limit), keeping the old file beside it
(``ontology.sqlite3.v<version>``) and carrying the version on, so that clients comparing
versions see a change. Then start the service and load a good ontology with
``PUT /ontology``.
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from semps.cli.options import data_dir_option
from semps.errors import SempsError
from semps.ontology.quadstore import Quadstore
from semps.settings import default_data_dir

FILE = "ontology.sqlite3"


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps ontology``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    reset = sub.add_parser(
        "reset",
        help="empty the stored ontology (the old file is kept beside it); the service "
        "must be stopped",
    )
    data_dir_option(reset)
    reset.set_defaults(func=run_reset)


def stored_version(path: Path) -> int:
    """The version an ontology file last committed (0 when it has none)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM semps_meta WHERE name = 'version'").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return 0
    return int(row[0]) if row else 0


def reset(data_dir: Path) -> tuple[int, Path | None]:
    """Empty the ontology of ``data_dir``: (its new version, where the old file went).

    Raises:
        SempsError: the data directory does not exist, or the file cannot be moved.
    """
    if not data_dir.is_dir():
        msg = f"data directory not found: {data_dir}"
        raise SempsError(msg)
    path = data_dir / FILE
    kept: Path | None = None
    version = 0
    if path.exists():
        version = stored_version(path)
        kept = path.with_name(f"{FILE}.v{version}")
        try:
            path.rename(kept)
            for extra in ("-journal", "-wal", "-shm"):
                side = path.with_name(FILE + extra)
                if side.exists():
                    side.rename(kept.with_name(kept.name + extra))
        except OSError as exc:
            msg = f"cannot move {path} aside: {exc.strerror or exc}"
            raise SempsError(msg) from exc
    store = Quadstore(path)
    try:
        with store.transaction():
            store.write((), (), clear=False, version=version + 1)
    finally:
        store.close()
    return version + 1, kept


def run_reset(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or default_data_dir()
    version, kept = reset(Path(data_dir))
    where = f"; the old one is kept in {kept}" if kept is not None else ""
    print(f"the ontology of {data_dir} is empty now (version {version}){where}")
    return 0
