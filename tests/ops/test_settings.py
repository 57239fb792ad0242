"""One settings object from flags, ``SEMPS_*`` variables and a TOML file, in that order of
precedence, every value checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from semps.errors import SettingsError
from semps.limits import DEFAULT_LIMITS
from semps.settings import SETTINGS, Settings, build_settings, parse_duration


def test_nothing_given_is_the_defaults() -> None:
    s = build_settings({}, environ={})
    assert s == Settings()
    assert s.limits == DEFAULT_LIMITS and s.max_body == DEFAULT_LIMITS.max_event_bytes


def test_a_flag_beats_the_environment_which_beats_the_file(tmp_path: Path) -> None:
    toml = tmp_path / "semps.toml"
    toml.write_text('port = 7000\nhost = "0.0.0.0"\nlog_format = "json"\nmax_patterns = 9\n')
    env = {"SEMPS_CONFIG": str(toml), "SEMPS_PORT": "7100", "SEMPS_HOST": "10.0.0.1"}
    s = build_settings({"port": "7200"}, environ=env)
    assert (s.port, s.host, s.log_format, s.limits.max_patterns) == (7200, "10.0.0.1", "json", 9)
    assert s.config == toml


def test_the_config_flag_beats_the_config_variable(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("port = 1111\n")
    (tmp_path / "b.toml").write_text("port = 2222\n")
    env = {"SEMPS_CONFIG": str(tmp_path / "a.toml")}
    assert build_settings({"config": str(tmp_path / "b.toml")}, environ=env).port == 2222


def test_every_setting_has_a_flag_a_variable_and_a_key(tmp_path: Path) -> None:
    for setting in SETTINGS:
        assert setting.option == "--" + setting.name.replace("_", "-")
        assert setting.env == "SEMPS_" + setting.name.upper()
    assert {s.name for s in SETTINGS} >= {"host", "port", "data_dir", "log_level", "max_body"}


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        ({"port": "http"}, {}, "setting port (--port): expected an integer, not 'http'"),
        ({}, {"SEMPS_PORT": "70000"}, "setting port (environment SEMPS_PORT) must be between"),
        ({}, {"SEMPS_LOG_LEVEL": "loud"}, "expected one of debug, info, warning, error"),
        ({}, {"SEMPS_ACCESS_LOG": "perhaps"}, "expected true or false, not 'perhaps'"),
        ({"retain_age": "soon"}, {}, "not a duration: 'soon'"),
        ({"workers": "0"}, {}, "setting workers (--workers) must be positive, not '0'"),
        ({"max_patterns": "-3"}, {}, "setting max_patterns (--max-patterns) must be positive"),
        ({"config": "/nonexistent/semps.toml"}, {}, "cannot read the settings file"),
    ],
)
def test_a_bad_value_names_the_setting_and_where_it_came_from(
    flags: dict[str, object], env: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        build_settings(flags, environ=env)
    assert message in str(caught.value)


def test_a_file_with_an_unknown_key_suggests_the_known_one(tmp_path: Path) -> None:
    toml = tmp_path / "semps.toml"
    toml.write_text("prot = 8000\n")
    with pytest.raises(
        SettingsError, match=r"unknown setting 'prot' in .*\(did you mean 'port'\?\)"
    ):
        build_settings({"config": str(toml)}, environ={})


def test_a_file_that_is_not_toml_says_where(tmp_path: Path) -> None:
    toml = tmp_path / "semps.toml"
    toml.write_text("port = = 1\n")
    with pytest.raises(SettingsError, match=r"is not valid TOML: .*line 1"):
        build_settings({"config": str(toml)}, environ={})


def test_a_file_value_of_the_wrong_type_is_refused(tmp_path: Path) -> None:
    toml = tmp_path / "semps.toml"
    toml.write_text('webhook_allow = "10.0.0.0/8"\nworkers = "two"\n')
    with pytest.raises(SettingsError, match=r"setting workers \(workers in .*\): expected an int"):
        build_settings({"config": str(toml)}, environ={})


def test_lists_come_from_a_toml_array_or_a_comma_separated_variable(tmp_path: Path) -> None:
    toml = tmp_path / "semps.toml"
    toml.write_text('webhook_allow = ["10.0.0.0/8", "hooks.internal"]\n')
    from_file = build_settings({"config": str(toml)}, environ={})
    from_env = build_settings({}, environ={"SEMPS_WEBHOOK_ALLOW": "10.0.0.0/8, hooks.internal"})
    assert from_file.webhook_allow == from_env.webhook_allow == ("10.0.0.0/8", "hooks.internal")


def test_durations_read_as_seconds() -> None:
    assert [parse_duration(t) for t in ("45s", "90m", "12h", "30d", "2w", "3600", "1.5h")] == [
        45,
        5400,
        43200,
        2592000,
        1209600,
        3600,
        5400,
    ]
    for bad in ("", "0", "-1d", "3 days", "1y", "1e3"):
        with pytest.raises(SettingsError):
            parse_duration(bad)


def test_the_metrics_token_is_not_shown_in_the_settings_repr() -> None:
    s = build_settings({}, environ={"SEMPS_METRICS_TOKEN": "hush-hush"})
    assert s.metrics_token == "hush-hush" and "hush-hush" not in repr(s)


OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def test_the_operations_page_lists_every_setting_with_its_flag_and_variable() -> None:
    page = OPERATIONS.read_text()
    rows = {
        line.split("|")[1].strip(" `"): line
        for line in page.splitlines()
        if line.startswith("| `") and "`SEMPS_" in line
    }
    assert set(rows) == {s.name for s in SETTINGS}
    for setting in SETTINGS:
        assert f"`{setting.env}`" in rows[setting.name]
        assert setting.option in rows[setting.name]


def test_the_operations_page_says_what_passing_each_limit_does() -> None:
    section = OPERATIONS.read_text().split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    listed = {
        flag
        for line in section.splitlines()
        if line.startswith("| `--")
        for flag in re.findall(r"`(--[a-z-]+)`", line.split("|")[1])
    }
    limits = {s.option for s in SETTINGS if s.help.startswith("limit:")} | {"--max-body"}
    assert listed == limits | {"--max-streams"}
