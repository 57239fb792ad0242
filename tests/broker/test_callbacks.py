"""The SSRF guard: which callback URLs are refused at registration and at delivery."""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import httpx
import pytest
from semps_test_support import raised

from semps.broker.callbacks import CallbackPolicy, Target, address_kind, literal_address
from semps.errors import DeliveryError, UnsafeCallback


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0177.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
        ("10.0x10.1", "10.16.0.1"),
        ("::1", "::1"),
        ("fe80::1%eth0", "fe80::1"),
    ],
)
def test_every_ip_form_the_resolver_accepts_is_read(host: str, address: str) -> None:
    assert literal_address(host) == ipaddress.ip_address(address)


@pytest.mark.parametrize("host", ["example.com", "1.2.3.4.5", "256.1.1.1", "0x", "08.1", ""])
def test_names_are_not_addresses(host: str) -> None:
    assert literal_address(host) is None or host == "0x"


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "a loopback"),
        ("::1", "a loopback"),
        ("::ffff:127.0.0.1", "a loopback"),
        ("10.0.0.1", "a private"),
        ("172.16.0.1", "a private"),
        ("192.168.1.1", "a private"),
        ("fd12::1", "a private"),
        ("169.254.169.254", "a link-local"),
        ("fe80::1", "a link-local"),
        ("0.0.0.0", "an unspecified"),
        ("::", "an unspecified"),
        ("224.0.0.1", "a multicast"),
        ("ff02::1", "a multicast"),
        ("240.0.0.1", "a reserved"),
        ("100.64.0.1", "a non-global"),
        ("93.184.215.14", None),
        ("2606:4700::1", None),
    ],
)
def test_address_kinds(address: str, kind: str | None) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:8000/", "refused callback to 127.0.0.1: a loopback address"),
        ("http://0x7f000001/", "refused callback to 127.0.0.1: a loopback address"),
        ("http://2130706433/", "refused callback to 127.0.0.1: a loopback address"),
        ("http://[::ffff:7f00:1]/", "refused callback to ::ffff:7f00:1: a loopback address"),
        (
            "https://169.254.169.254/latest",
            "refused callback to 169.254.169.254: a link-local address",
        ),
        ("http://[fe80::1]/", "refused callback to fe80::1: a link-local address"),
        ("http://10.0.0.5/", "refused callback to 10.0.0.5: a private address"),
    ],
)
def test_non_public_literals_are_refused_at_registration(url: str, message: str) -> None:
    refused = raised(UnsafeCallback, CallbackPolicy().check_url, url)
    assert str(refused) == message + " (see --webhook-allow)"
    assert isinstance(refused, DeliveryError)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "http://h.example/%00",
            "callback URL contains a control character or space: 'http://h.example/%00'",
        ),
        (
            "http://h.example/a%1Fb",
            "callback URL contains a control character or space: 'http://h.example/a%1Fb'",
        ),
        (
            "http://h.example/\x00",
            "callback URL contains a control character or space: 'http://h.example/\\x00'",
        ),
        (
            "http://h.example/a b",
            "callback URL contains a control character or space: 'http://h.example/a b'",
        ),
        ("http://user:pw@h.example/", "callback URL must not carry credentials (user:password@)"),
        ("http://user@h.example/", "callback URL must not carry credentials (user:password@)"),
        ("file:///etc/passwd", "callback must be an http(s) URL, not 'file:///etc/passwd'"),
        ("gopher://h.example/", "callback must be an http(s) URL, not 'gopher://h.example/'"),
        ("http:///x", "callback URL has no host: 'http:///x'"),
        ("http://[::1/", "callback URL does not parse: Invalid port: ':1'"),
    ],
)
def test_malformed_urls_are_refused(url: str, message: str) -> None:
    everything = CallbackPolicy(["0.0.0.0/0", "::/0"])  # even when everything is allowed
    assert str(raised(UnsafeCallback, everything.check_url, url)) == message


def test_the_allow_list_takes_networks_and_host_names() -> None:
    policy = CallbackPolicy(["127.0.0.0/8", "10.1.2.3", "hooks.internal"])
    assert str(policy.check_url("http://127.0.0.1:9/x")) == "http://127.0.0.1:9/x"
    assert policy.check_url("http://0x7f000001/").host == "0x7f000001"
    assert policy.check_url("http://[::ffff:127.0.0.1]/").host == "::ffff:127.0.0.1"
    policy.check_url("http://10.1.2.3/")
    with pytest.raises(UnsafeCallback):
        policy.check_url("http://10.1.2.4/")
    with pytest.raises(UnsafeCallback):
        policy.check_url("http://[::1]/")  # 127.0.0.0/8 does not cover IPv6 loopback
    with pytest.raises(UnsafeCallback) as refused:
        CallbackPolicy(["10.0.0.0/8", "a/b"])
    assert str(refused.value) == "--webhook-allow takes a CIDR or a host name, not 'a/b'"


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8000/",
        "http://LOCALHOST./x",
        "http://api.localhost/",
        "http://ip6-localhost/",
    ],
)
def test_loopback_names_are_refused_at_registration_like_loopback_addresses(url: str) -> None:
    """Issue 38: ``http://localhost:PORT/`` was accepted (201) and refused only at delivery."""
    refused = raised(UnsafeCallback, CallbackPolicy().check_url, url)
    host = httpx.URL(url).host
    assert str(refused) == f"refused callback to {host}: a loopback address (see --webhook-allow)"


def test_names_are_resolved_and_every_address_checked() -> None:
    name = socket.gethostname()  # not a loopback name, yet it resolves to this machine
    with pytest.raises(UnsafeCallback) as refused:
        asyncio.run(CallbackPolicy().resolve(f"http://{name}:9/hook"))
    message = str(refused.value)
    assert message.startswith(f"refused callback to {name} (")
    assert message.endswith(" address (see --webhook-allow)")
    target = asyncio.run(CallbackPolicy(["localhost"]).resolve("http://localhost:9/hook"))
    assert target.address.is_loopback
    assert target.host_header() == "localhost:9"


def test_the_request_goes_to_the_checked_address() -> None:
    target = asyncio.run(CallbackPolicy().resolve("https://93.184.215.14:8443/a?b=1"))
    assert target == Target(target.url, ipaddress.ip_address("93.184.215.14"), "93.184.215.14")
    assert str(target.request_url()) == "https://93.184.215.14:8443/a?b=1"
    v6 = Target(
        target.url.copy_with(host="example.com"),
        ipaddress.ip_address("2606:4700::1"),
        "example.com",
    )
    assert str(v6.request_url()) == "https://[2606:4700::1]:8443/a?b=1"
    assert v6.host_header() == "example.com:8443"
