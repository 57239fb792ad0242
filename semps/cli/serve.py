"""``semps serve``: run the broker service (FastAPI under uvicorn).

Its flags are the settings table of :mod:`semps.settings` (each also a ``SEMPS_*``
variable and a key of the ``--config`` TOML file); this module turns them into one
:class:`~semps.settings.Settings`, configures the log, secures the data directory and runs
the server.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import socket
from typing import TYPE_CHECKING

from semps import __version__
from semps.errors import SempsError
from semps.gcpolicy import SERVING_THRESHOLDS
from semps.settings import SETTINGS, Settings, build_settings, defaults, format_duration

if TYPE_CHECKING:
    from semps.bridges.mqtt import MqttBridge
    from semps.broker.broker import Broker

_log = logging.getLogger("semps.serve")


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps serve``: one flag per setting (absent flags stay unset, so the
    environment and the file can give them)."""
    parser.set_defaults(func=run)
    shown = defaults()
    for setting in SETTINGS:
        extra: dict[str, object] = {"metavar": setting.shown_metavar}
        if setting.name == "access_log":
            extra = {"action": argparse.BooleanOptionalAction}
        elif setting.name in ("webhook_allow", "mqtt_topics"):
            extra["action"] = "append"
        default = shown.get(setting.name)
        if default in (None, (), False):
            default_text = ""
        elif setting.name in ("retain_age", "prune_interval", "mqtt_session_expiry"):
            default_text = f", default {format_duration(float(default))}"  # type: ignore[arg-type]
        else:
            default_text = f", default {default}"
        parser.add_argument(
            setting.option,
            dest=setting.name,
            default=argparse.SUPPRESS,
            help=f"{setting.help} [{setting.env}{default_text}]",
            **extra,  # type: ignore[arg-type]
        )


def settings_from(args: argparse.Namespace) -> Settings:
    """The settings the flags, the environment and the file give."""
    return build_settings(
        {s.name: getattr(args, s.name) for s in SETTINGS if hasattr(args, s.name)}
    )


def check_address(host: str, port: int) -> None:
    """Refuse, before anything starts, an address the server could not listen on.

    Raises:
        SempsError: the host does not resolve, or the address is taken or not ours.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        msg = f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}"
        raise SempsError(msg) from exc
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            msg = f"cannot listen on {host}:{port}: {exc.strerror or exc}"
            raise SempsError(msg) from exc


def _startup(settings: Settings, broker: Broker) -> None:
    counts = broker.store.counts()
    fields = {
        "version": __version__,
        "address": f"http://{settings.host}:{settings.port}",
        "data_dir": str(settings.data_dir.resolve()),
        "subscriptions": counts["subscriptions"],
        "tokens": counts["tokens"],
        "notifications_stored": counts["notifications_stored"],
        "ontology_version": broker.ontology.version,
        "workers": settings.workers,
        "config": str(settings.config) if settings.config else None,
    }
    retention = (
        f"{settings.retain_count or 'any number of'} notifications a subscription"
        f" for {format_duration(settings.retain_age) if settings.retain_age else 'ever'}"
    )
    _log.info(
        "semps %s serving on %s, data in %s: %d subscriptions, %d tokens, ontology version "
        "%d, %d workers; keeping %s",
        __version__,
        fields["address"],
        fields["data_dir"],
        counts["subscriptions"],
        counts["tokens"],
        broker.ontology.version,
        settings.workers,
        retention,
        extra={"semps": fields},
    )


#: The bridge's options that are the settings ``mqtt_<name>`` as they are, by ``<name>``.
_MQTT_SETTINGS = (
    "topics",
    "topic_template",
    "dead_letter_topic",
    "client_id",
    "event_id",
    "username",
    "password",
    "ca_file",
    "cert_file",
    "key_file",
)


def _mqtt_bridge(settings: Settings, broker: Broker) -> MqttBridge | None:
    """The MQTT bridge ``--mqtt`` asks for (checked before the server starts), or ``None``."""
    if settings.mqtt is None:
        return None
    from semps.bridges.mqtt import MqttBridge
    from semps.bridges.mqtt_options import MqttOptions

    named = {name: getattr(settings, f"mqtt_{name}") for name in _MQTT_SETTINGS}
    options = MqttOptions.parse(
        settings.mqtt,
        **named,
        session_expiry=int(settings.mqtt_session_expiry),
        max_message=settings.max_body,
    )
    return MqttBridge(broker, options)


def run(args: argparse.Namespace) -> int:
    from semps.api.app import create_app
    from semps.api.server import Server
    from semps.broker.at_rest import KEY_FILE, private_dir, private_files
    from semps.broker.retention import RetentionPolicy
    from semps.log import configure

    settings = settings_from(args)
    check_address(settings.host, settings.port)
    os.umask(0o077)  # every file the service creates is its own: 0600 files, 0700 folders
    configure(settings.log_level, settings.log_format)
    private_dir(settings.data_dir)
    app = create_app(
        settings.data_dir,
        max_body=settings.max_body,
        webhook_attempts=settings.webhook_attempts,
        webhook_backoff=settings.webhook_backoff,
        webhook_allow=settings.webhook_allow,
        max_streams=settings.max_streams,
        limits=settings.limits,
        workers=settings.workers,
        metrics_token=settings.metrics_token,
    )
    broker: Broker = app.state.broker
    broker.pruner.configure(
        RetentionPolicy(settings.retain_count, settings.retain_age, settings.prune_interval)
    )
    broker.store.document_bytes = settings.keep_event_bytes
    data = settings.data_dir
    private_files([data / "semps.sqlite3", data / "ontology.sqlite3", data / KEY_FILE])
    bridge = _mqtt_bridge(settings, broker)
    _startup(settings, broker)
    # Requests allocate many short-lived objects and few cycles: collect seldom, and never
    # walk what start-up built (the subscriptions, the ontology).
    gc.set_threshold(*SERVING_THRESHOLDS)
    gc.collect()
    gc.freeze()
    server = Server.of(  # ends the streams as it stops; guards HTTP with the limits
        app,
        limits=settings.limits,
        host=settings.host,
        port=settings.port,
        log_config=None,
        log_level=settings.log_level,
        access_log=settings.access_log,
    )
    if bridge is not None:
        server.on_stop.append(bridge.close)  # before the broker closes its pipeline
        bridge.start()
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: uvicorn raises it once stopped
        server.run()
    if not server.started:  # uvicorn logged why (as uvicorn.run exits 3 then)
        return 3
    return 0
