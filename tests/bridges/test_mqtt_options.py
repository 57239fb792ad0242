"""The MQTT bridge's options: what `semps serve` accepts and the one-line reasons it refuses
the rest (before anything starts); MQTT's topic filter rules (MQTT 3.1.1 section 4.7)."""

from __future__ import annotations

import pytest

from semps.bridges.mqtt_options import MqttOptions, TopicRule, topic_matches
from semps.errors import SettingsError


def test_a_url_gives_host_port_tls_and_credentials() -> None:
    plain = MqttOptions.parse("mqtt://broker.example")
    assert (plain.host, plain.port, plain.tls, plain.username) == (
        "broker.example",
        1883,
        False,
        None,
    )
    secure = MqttOptions.parse("mqtts://ad%40a:p%3Ass@10.0.0.1", username=None)
    assert (secure.port, secure.tls, secure.username, secure.password) == (
        8883,
        True,
        "ad@a",
        "p:ss",
    )
    assert "p:ss" not in repr(secure)


def test_settings_override_the_url() -> None:
    options = MqttOptions.parse("mqtt://u:p@h:1884", username="other", password="secret")
    assert (options.port, options.username, options.password) == (1884, "other", "secret")


@pytest.mark.parametrize(
    ("url", "options", "reason"),
    [
        ("http://x", {}, "not an MQTT URL: 'http://x'"),
        ("mqtt://", {}, "not an MQTT URL"),
        ("mqtt://h:99999", {}, "not an MQTT URL"),
        ("mqtt://h", {"topics": ("a/b#",)}, "not an MQTT topic filter: 'a/b#'"),
        ("mqtt://h", {"topics": ("a/#/b",)}, "not an MQTT topic filter"),
        ("mqtt://h", {"topics": ("a/x+",)}, "not an MQTT topic filter"),
        ("mqtt://h", {"topics": ("",)}, "not an MQTT topic filter"),
        ("mqtt://h", {"topics": ("a=image/png",)}, "unknown media type 'image/png'"),
        ("mqtt://h", {"topic_template": "semps/{nope}"}, "only {subscription} and {owner}"),
        ("mqtt://h", {"topic_template": "semps/+/x"}, "no wildcards"),
        ("mqtt://h", {"event_id": "uuid"}, "mqtt_event_id must be one of generated, digest"),
        ("mqtt://h", {"cert_file": "c.pem"}, "mqtt_cert_file and mqtt_key_file go together"),
    ],
)
def test_bad_options_are_refused_with_the_reason(
    url: str, options: dict[str, object], reason: str
) -> None:
    with pytest.raises(SettingsError, match=reason.replace("{", r"\{").replace("+", r"\+")):
        MqttOptions.parse(url, **options)


@pytest.mark.parametrize(
    ("pattern", "topic", "matches"),
    [
        ("sport/tennis/player1/#", "sport/tennis/player1", True),  # '#' includes the parent
        ("sport/tennis/player1/#", "sport/tennis/player1/ranking/wimbledon", True),
        ("sport/#", "sport", True),
        ("sport/tennis/+", "sport/tennis/player1", True),
        ("sport/tennis/+", "sport/tennis/player1/ranking", False),
        ("sport/+", "sport", False),
        ("+/+", "/finance", True),  # an empty level is a level
        ("/+", "/finance", True),
        ("+", "/finance", False),
        ("#", "any/thing", True),
    ],
)
def test_topic_filters_match_as_mqtt_says(pattern: str, topic: str, matches: bool) -> None:
    """The examples of MQTT 3.1.1, section 4.7.1."""
    assert topic_matches(pattern, topic) is matches


def test_the_media_type_comes_from_the_rule_then_the_message_then_rdf_xml() -> None:
    options = MqttOptions.parse("mqtt://h", topics=("sensors/+/t=text/turtle", "other/#"))
    assert options.topics[1] == TopicRule("other/#", None)
    assert options.media_type("sensors/a/t", "application/ld+json") == "text/turtle"
    assert options.media_type("other/x", "application/ld+json") == "application/ld+json"
    assert options.media_type("other/x", None) == "application/rdf+xml"


def test_digest_ids_name_the_same_message_the_same() -> None:
    options = MqttOptions.parse("mqtt://h", event_id="digest")
    first = options.event_id_of("a/b", b"payload")
    assert first == options.event_id_of("a/b", b"payload")
    assert first != options.event_id_of("a/c", b"payload")
    assert MqttOptions.parse("mqtt://h").event_id_of("a/b", b"payload") is None


def test_the_notification_topic_names_the_subscription_and_its_owner() -> None:
    options = MqttOptions.parse("mqtt://h", topic_template="semps/{owner}/{subscription}")
    assert options.notify_topic("sub-3", "ada") == "semps/ada/sub-3"
    assert options.notify_topic("sub-3", None) == "semps/-/sub-3"
