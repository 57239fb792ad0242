"""The service's settings: one frozen object built from flags, environment and a TOML file.

Every setting has a command-line flag, an environment variable (``SEMPS_`` and its name in
capitals) and a key in the optional TOML file (``--config semps.toml`` or ``SEMPS_CONFIG``).
A value given in several places is taken from the first of: flag, environment, file,
default. Every value is checked; a bad one raises :class:`~semps.errors.SettingsError`
naming the setting and where the value came from.

Example:
    >>> s = build_settings({"port": 9000}, environ={"SEMPS_LOG_LEVEL": "debug"})
    >>> (s.port, s.log_level, s.host)
    (9000, 'debug', '127.0.0.1')
    >>> s.limits.max_patterns
    64
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from semps.errors import SettingsError
from semps.limits import DEFAULT_LIMITS, Limits
from semps.setting_values import (
    format_duration,
    parse_duration,
    parse_retention_age,
    read_bool,
    read_choice,
    read_float,
    read_int,
    read_path,
    read_seconds,
    read_str,
    read_strings,
)

__all__ = [
    "SETTINGS",
    "Setting",
    "Settings",
    "build_settings",
    "format_duration",
    "parse_duration",
    "parse_retention_age",
]

DEFAULT_DATA_DIR = Path("var/semps")
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")


@dataclass(frozen=True, slots=True)
class Settings:
    """What ``semps serve`` runs with (see the settings table in docs/operations.md).

    Attributes:
        host / port: where the HTTP API listens.
        data_dir: the broker's files (created with mode 0700).
        workers: matching processes.
        max_streams: open SSE and WebSocket streams per subscriber.
        webhook_attempts / webhook_backoff: deliveries tried (the pause doubling from
            ``webhook_backoff`` seconds) before a notification is dead-lettered.
        webhook_allow: non-public networks or host names webhooks may call.
        log_level / log_format / access_log: what the log says and how.
        retain_count / retain_age: stored notifications kept per subscription, by number
            and by age in seconds (0: no bound); a subscription may ask for its own.
        prune_interval: seconds between two retention passes.
        keep_event_bytes: bytes of published event documents kept in all (``GET
            /events/{id}``, explanations), the oldest going first; 0 keeps none.
        metrics_token: a bearer token that may read ``/metrics`` only (``None``: none; any
            valid token reads ``/metrics`` either way).
        mqtt: the MQTT broker to bridge (``mqtt://host:port`` or ``mqtts://...``; ``None``:
            no bridge); the ``mqtt_*`` settings below shape it (docs/mqtt.md).
        mqtt_topics: topic filters whose messages become events (``filter=media/type``).
        mqtt_topic_template: where each subscription's notifications are published.
        mqtt_dead_letter_topic: where unreadable messages go, with the reason.
        mqtt_client_id: the bridge's MQTT client id prefix (keep it stable).
        mqtt_event_id: ``generated`` or ``digest`` (from the topic and the payload).
        mqtt_username / mqtt_password: credentials (instead of the URL's).
        mqtt_ca_file / mqtt_cert_file / mqtt_key_file: TLS trust and client certificate.
        mqtt_session_expiry: seconds the MQTT broker keeps the inbound session.
        limits: the per-request limits.
        config: the TOML file the settings were read from, if any.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = DEFAULT_DATA_DIR
    workers: int = field(default_factory=lambda: min(2, os.cpu_count() or 1))
    max_streams: int = 16
    webhook_attempts: int = 5
    webhook_backoff: float = 0.5
    webhook_allow: tuple[str, ...] = ()
    log_level: str = "info"
    log_format: str = "text"
    access_log: bool = False
    retain_count: int = 100_000
    retain_age: float = 30 * 86400.0
    prune_interval: float = 60.0
    keep_event_bytes: int = 64 * 1024 * 1024
    metrics_token: str | None = field(default=None, repr=False)
    mqtt: str | None = field(default=None, repr=False)
    mqtt_topics: tuple[str, ...] = ()
    mqtt_topic_template: str = "semps/{subscription}"
    mqtt_dead_letter_topic: str = "semps/dead-letters"
    mqtt_client_id: str = "semps"
    mqtt_event_id: str = "generated"
    mqtt_username: str | None = None
    mqtt_password: str | None = field(default=None, repr=False)
    mqtt_ca_file: Path | None = None
    mqtt_cert_file: Path | None = None
    mqtt_key_file: Path | None = None
    mqtt_session_expiry: float = 86400.0
    limits: Limits = DEFAULT_LIMITS
    config: Path | None = None

    @property
    def max_body(self) -> int:
        """Bytes a request body may have (the ``max_event_bytes`` limit)."""
        return self.limits.max_event_bytes


# -- the table of settings ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Setting:
    """One row of the settings table: its name (the TOML key), reader, check and help."""

    name: str
    read: Callable[[object], Any]
    help: str
    check: Callable[[Any], str | None] = lambda value: None
    flag: str = ""
    metavar: str | None = None

    @property
    def env(self) -> str:
        """Its environment variable."""
        return "SEMPS_" + self.name.upper()

    @property
    def shown_metavar(self) -> str | None:
        """What its flag's value is called in ``--help``."""
        if self.metavar is not None:
            return self.metavar
        names: dict[Callable[[object], Any], str] = {
            read_int: "N",
            read_float: "SECONDS",
            read_seconds: "DURATION",
            read_str: "TEXT",
            read_path: "PATH",
        }
        return names.get(self.read)

    @property
    def option(self) -> str:
        """Its command-line flag."""
        return self.flag or "--" + self.name.replace("_", "-")


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be positive"


def _not_negative(value: float) -> str | None:
    return None if value >= 0 else "must be 0 or more"


def _port(value: int) -> str | None:
    return None if 0 < value < 65536 else "must be between 1 and 65535"


_LIMIT_HELP = {
    "max_query_bytes": "bytes of one subscription's text",
    "max_query_depth": "nesting depth of a subscription",
    "max_patterns": "triple patterns in one subscription",
    "max_subscriptions": "subscriptions one subscriber may hold",
    "max_document_depth": "nesting depth of an event or ontology document",
    "max_closure_triples": "triples an event may hold once closed under the ontology",
    "max_closure_ratio": "closure bound as a multiple of the event's own triples",
    "max_batch_subscriptions": "subscriptions one POST /subscriptions/batch carries",
    "max_batch_bytes": "bytes of one POST /subscriptions/batch body",
    "max_solutions": "solutions one notification carries",
    "max_count": "where solution counts stop",
    "max_notification_bytes": "bytes of one notification (solutions are left out past it)",
    "match_timeout": "CPU seconds a batch of events may match without progress (the watchdog)",
    "max_ontology_bytes": "bytes of an ontology document (PUT/POST /ontology)",
    "max_ontology_triples": "triples the ontology may hold",
    "max_hierarchy_depth": "longest subClassOf/subPropertyOf chain of the ontology",
    "max_ontology_rules": "entries of the ontology's compiled rule tables",
    "ontology_timeout": "seconds an ontology edit may take to compile",
    "max_definitions": "composite event definitions one subscriber may hold",
    "max_detections": "composite detections one event may cause (split between owners)",
    "max_detections_per_owner": "composite detections one event may cause for one owner",
    "max_header_bytes": "bytes of an HTTP request's header fields (431)",
    "max_headers": "header fields of an HTTP request (431)",
    "max_request_line": "bytes of an HTTP request line (414)",
    "header_timeout": "seconds a connection may take to send a request head (408)",
    "body_timeout": "seconds a request body may take to arrive (408)",
    "idle_timeout": "seconds a kept-alive connection may stay idle",
    "max_connections": "open HTTP connections in all (fitted to the file limit)",
    "max_client_connections": "open HTTP connections of one client address",
    "max_update_bytes": "bytes of one SPARQL Update of the knowledge graph",
    "max_update_triples": "triples one graph edit inserts or deletes",
    "max_load_triples": "triples one bulk load of the knowledge graph brings",
    "max_edit_inferred": "inferred triples one graph edit may add or remove",
    "max_edit_inferred_ratio": "that bound as a multiple of the edit's own triples",
    "max_graph_triples": "triples the knowledge graph may hold (its closure)",
    "graph_timeout": "seconds planning one graph edit (or ontology re-close), or a query, may take",
    "max_update_rows": "rows an update's WHERE clause may visit",
    "max_query_rows": "rows a query (/query, SEPA's current answers) may visit",
    "max_queries_in_flight": "queries one principal may have running at once (429 past it)",
    "max_answer_rows": "rows one query's answer may hold (/query, SEPA's current answers)",
    "max_stream_subscriptions": "subscriptions one multiplexed stream (/notifications) carries",
}

#: Every setting but the limits, in the order of docs/operations.md's table.
SETTINGS: tuple[Setting, ...] = (
    Setting(
        "config",
        read_path,
        "a TOML file of settings (keys: these flags' names with _)",
        metavar="FILE",
    ),
    Setting("host", read_str, "address the HTTP API listens on", metavar="ADDRESS"),
    Setting("port", read_int, "port the HTTP API listens on", _port),
    Setting("data_dir", read_path, "the broker's data directory (created 0700)", metavar="DIR"),
    Setting("workers", read_int, "matching processes, each holding every index", _positive),
    Setting("max_streams", read_int, "open SSE/WebSocket streams per subscriber", _positive),
    Setting(
        "max_body", read_int, "bytes a request body may have (an event, an ontology)", _positive
    ),
    Setting(
        "webhook_attempts", read_int, "webhook deliveries tried before a dead letter", _positive
    ),
    Setting("webhook_backoff", read_float, "seconds before the first retry (doubling)", _positive),
    Setting(
        "webhook_allow",
        read_strings,
        "a non-public network or host name webhooks may call (repeatable)",
        metavar="CIDR_OR_HOST",
    ),
    Setting(
        "log_level",
        read_choice(*LOG_LEVELS),
        "least severe log records written",
        metavar="{" + ",".join(LOG_LEVELS) + "}",
    ),
    Setting(
        "log_format",
        read_choice(*LOG_FORMATS),
        "text lines, or one JSON object a line",
        metavar="{" + ",".join(LOG_FORMATS) + "}",
    ),
    Setting("access_log", read_bool, "log every HTTP request (--no-access-log: do not)"),
    Setting(
        "retain_count", read_int, "notifications kept per subscription (0: no bound)", _not_negative
    ),
    Setting(
        "retain_age",
        read_seconds,
        "age past which notifications go (e.g. 7d; 0: none)",
        _not_negative,
    ),
    Setting("prune_interval", read_seconds, "time between two retention passes", _positive),
    Setting(
        "keep_event_bytes",
        read_int,
        "bytes of event documents kept for GET /events/{id} (oldest first; 0: none)",
        _not_negative,
    ),
    Setting(
        "metrics_token", read_str, "a bearer token that may read /metrics only", metavar="SECRET"
    ),
    Setting(
        "mqtt", read_str, "bridge this MQTT broker (mqtt://host:port, mqtts://)", metavar="URL"
    ),
    Setting(
        "mqtt_topics",
        read_strings,
        "an MQTT topic filter whose messages become events, FILTER[=MEDIA/TYPE] (repeatable)",
        metavar="FILTER",
    ),
    Setting(
        "mqtt_topic_template", read_str, "MQTT topic of notifications ({subscription}, {owner})"
    ),
    Setting(
        "mqtt_dead_letter_topic", read_str, "MQTT topic of unreadable messages", metavar="TOPIC"
    ),
    Setting("mqtt_client_id", read_str, "MQTT client id prefix (-in, -out appended)", metavar="ID"),
    Setting(
        "mqtt_event_id",
        read_choice("generated", "digest"),
        "event ids of MQTT messages: generated, or a digest of topic and payload",
        metavar="{generated,digest}",
    ),
    Setting("mqtt_username", read_str, "MQTT user name"),
    Setting("mqtt_password", read_str, "MQTT password", metavar="SECRET"),
    Setting("mqtt_ca_file", read_path, "CA certificates trusted for mqtts://", metavar="FILE"),
    Setting("mqtt_cert_file", read_path, "client certificate for mqtts://", metavar="FILE"),
    Setting("mqtt_key_file", read_path, "client key for mqtts://", metavar="FILE"),
    Setting(
        "mqtt_session_expiry", read_seconds, "how long the MQTT broker keeps the session", _positive
    ),
) + tuple(
    Setting(
        f.name,
        read_int if isinstance(getattr(DEFAULT_LIMITS, f.name), int) else read_float,
        "limit: " + _LIMIT_HELP.get(f.name, f.name),
        _positive,
    )
    for f in fields(Limits)
    if f.name != "max_event_bytes"  # that one is max_body
)

_BY_NAME = {s.name: s for s in SETTINGS}
_LIMIT_NAMES = {f.name for f in fields(Limits)} - {"max_event_bytes"}


def defaults() -> dict[str, object]:
    """Every setting's default value, by name."""
    base = Settings()
    values: dict[str, object] = {
        f.name: getattr(base, f.name) for f in fields(Settings) if f.name != "limits"
    }
    values.update({n: getattr(DEFAULT_LIMITS, n) for n in _LIMIT_NAMES})
    values["max_body"] = DEFAULT_LIMITS.max_event_bytes
    return values


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The data directory when no flag names one: ``SEMPS_DATA_DIR`` or ``var/semps``."""
    env = os.environ if environ is None else environ
    return Path(env.get("SEMPS_DATA_DIR") or DEFAULT_DATA_DIR)


def _suggest(name: str) -> str:
    close = difflib.get_close_matches(name, list(_BY_NAME), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _read(setting: Setting, value: object, where: str) -> object:
    try:
        result = setting.read(value)
    except (ValueError, SettingsError) as exc:
        msg = f"setting {setting.name} ({where}): {exc}, not {value!r}"
        raise SettingsError(msg) from exc
    problem = setting.check(result)
    if problem is not None:
        msg = f"setting {setting.name} ({where}) {problem}, not {value!r}"
        raise SettingsError(msg)
    return result


def read_toml(path: Path) -> dict[str, object]:
    """The settings a TOML file gives (flat keys, as in the settings table).

    Raises:
        SettingsError: the file is missing, not TOML, or names an unknown setting.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        msg = f"cannot read the settings file {path}: {exc.strerror or exc}"
        raise SettingsError(msg) from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        msg = f"the settings file {path} is not valid TOML: {exc}"
        raise SettingsError(msg) from exc
    values: dict[str, object] = {}
    for key, value in data.items():
        setting = _BY_NAME.get(key)
        if setting is None or key == "config":
            msg = f"unknown setting {key!r} in {path}{_suggest(key)}"
            raise SettingsError(msg)
        values[key] = _read(setting, value, f"{key} in {path}")
    return values


def build_settings(
    flags: Mapping[str, object] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """The settings from ``flags`` (only those given), the environment and the TOML file.

    Precedence: flags, then ``SEMPS_*`` variables, then the file (``config``), then the
    defaults.

    Raises:
        SettingsError: a value is malformed or out of range, or the file is unreadable.
    """
    flags = dict(flags or {})
    env = os.environ if environ is None else environ
    from_env = {  # an empty variable counts as unset (compose files set them so)
        s.name: _read(s, env[s.env], f"environment {s.env}") for s in SETTINGS if env.get(s.env)
    }
    from_flags = {
        name: _read(_BY_NAME[name], value, _BY_NAME[name].option)
        for name, value in flags.items()
        if value is not None
    }
    config = from_flags.get("config") or from_env.get("config")
    from_file = read_toml(config) if isinstance(config, Path) else {}
    values = {**defaults(), **from_file, **from_env, **from_flags}
    return _assemble(values)


def _assemble(values: Mapping[str, object]) -> Settings:
    limits = Limits(
        **{name: values[name] for name in _LIMIT_NAMES},  # type: ignore[arg-type]
        max_event_bytes=values["max_body"],  # type: ignore[arg-type]
    )
    own = {f.name for f in fields(Settings)} - {"limits"}
    return Settings(**{name: values[name] for name in own}, limits=limits)  # type: ignore[arg-type]


def names() -> Iterable[str]:
    """The settings' names (TOML keys), in the table's order."""
    return (s.name for s in SETTINGS)
