"""Which webhook callback URLs the broker will call (the SSRF guard).

A callback URL is checked twice:

* **at registration** (:meth:`CallbackPolicy.check_url`): ``http`` or ``https`` only, no
  credentials (``user:pw@``), no control characters raw or percent-encoded (``%00``), a host
  that parses; a host written as an IP address (in any form the resolver accepts:
  ``127.0.0.1``, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``[::ffff:127.0.0.1]``) must
  be a public address, and a loopback name (``localhost``, ``*.localhost``) is refused.
* **at delivery** (:meth:`CallbackPolicy.resolve`), for the URL and again for every redirect:
  the host is resolved and *every* address it resolves to must be public; the request is
  then sent to the checked address (the URL's host is kept in the ``Host`` header and as the
  TLS server name), so a second, different DNS answer cannot redirect it (DNS rebinding).

Refused: loopback, private (RFC 1918, ULA ``fc00::/7``), link-local (``169.254.0.0/16``,
with the ``169.254.169.254`` metadata address, and ``fe80::/10``), unspecified, multicast,
reserved and other non-global addresses (shared ``100.64.0.0/10``, documentation ranges),
IPv4-mapped IPv6 forms of any of these. ``semps serve --webhook-allow CIDR_OR_HOST``
(repeatable) lets a test or a private deployment call such addresses: a CIDR allows the
addresses in it, a host name allows that name whatever it resolves to.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from semps.errors import UnsafeCallback

__all__ = ["CallbackPolicy", "Target", "address_kind"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Control characters, raw or percent-encoded (``%00``-``%1F``, ``%7F``), and raw spaces.
_CONTROL = re.compile(r"[\x00-\x20\x7f]|%[01][0-9a-fA-F]|%7[fF]")
_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")
#: Host names that always name the loopback interface (RFC 6761: ``localhost`` and every name
#: below it), refused at registration like any loopback address.
_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback", "localhost6"})


def _ipv4_part(part: str) -> int:
    if part[:2] in ("0x", "0X"):
        return int(part[2:] or "0", 16)
    return int(part, 8) if part[0] == "0" else int(part)


def _ipv4_number(host: str) -> ipaddress.IPv4Address | None:
    """``host`` read as an IPv4 address the way ``inet_aton`` does (1-4 parts, decimal,
    ``0x`` hex or ``0`` octal): ``2130706433`` and ``0x7f.1`` are loopback too."""
    parts = host.split(".")
    if host.endswith("."):
        parts.pop()
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.fullmatch(p) for p in parts):
        return None
    numbers = [_ipv4_part(p) for p in parts]
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (5 - len(numbers)) + last
    return ipaddress.IPv4Address(value)


def literal_address(host: str) -> IPAddress | None:
    """The address if ``host`` is an IP literal (any IPv4 form, or IPv6 without brackets)."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])  # drop an IPv6 zone id
    except ValueError:
        return _ipv4_number(host)


def address_kind(ip: IPAddress) -> str | None:
    """Why ``ip`` is refused (``"a loopback"``, ``"a private"``, ...), or ``None`` if it is a
    public address.

    Example:
        >>> address_kind(ipaddress.ip_address("169.254.169.254"))
        'a link-local'
        >>> address_kind(ipaddress.ip_address("::ffff:10.0.0.1"))
        'a private'
        >>> address_kind(ipaddress.ip_address("93.184.215.14")) is None
        True
    """
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    checks = (
        ("an unspecified", ip.is_unspecified),
        ("a loopback", ip.is_loopback),
        ("a link-local", ip.is_link_local),
        ("a multicast", ip.is_multicast),
        ("a reserved", ip.is_reserved),
        ("a private", ip.is_private),
        ("a non-global", not ip.is_global),
    )
    return next((kind for kind, hit in checks if hit), None)


@dataclass(frozen=True, slots=True)
class Target:
    """Where one request goes: the checked URL, the address to connect to, its host name."""

    url: httpx.URL
    address: IPAddress
    host: str

    def request_url(self) -> httpx.URL:
        """``url`` with its host replaced by the checked address (the connection is pinned)."""
        return self.url.copy_with(host=str(self.address))

    def host_header(self) -> str:
        """The ``Host`` header the URL would have sent."""
        host = self.url.raw_host.decode("ascii")
        if ":" in host:
            host = f"[{host}]"
        return host if self.url.port is None else f"{host}:{self.url.port}"


class CallbackPolicy:
    """The SSRF guard: which callback URLs are refused, with an allow-list.

    Args:
        allow: CIDRs (``127.0.0.1/32``, ``10.0.0.0/8``, ``::1``) whose addresses may be
            called, and host names (``localhost``, ``hooks.internal``) that may be called
            whatever they resolve to.

    Example:
        >>> try:
        ...     CallbackPolicy().check_url("http://0x7f000001:9/hook")
        ... except UnsafeCallback as exc:
        ...     print(exc)
        refused callback to 127.0.0.1: a loopback address (see --webhook-allow)
        >>> str(CallbackPolicy(["127.0.0.0/8"]).check_url("http://127.0.0.1:9/hook"))
        'http://127.0.0.1:9/hook'
    """

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self.networks: list[Network] = []
        self.hosts: set[str] = set()
        for entry in allow:
            entry = entry.strip()
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                if not entry or _CONTROL.search(entry) or "/" in entry:
                    msg = f"--webhook-allow takes a CIDR or a host name, not {entry!r}"
                    raise UnsafeCallback(msg) from None
                self.hosts.add(entry.lower().rstrip("."))

    def allowed(self, ip: IPAddress) -> bool:
        """Whether ``ip`` is in an allowed network (an IPv4-mapped address counts as IPv4)."""
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in net for net in self.networks)

    def check_address(self, ip: IPAddress, where: str) -> None:
        """Raise :class:`UnsafeCallback` unless ``ip`` is public or allowed."""
        kind = address_kind(ip)
        if kind is not None and not self.allowed(ip):
            msg = f"refused callback to {where}: {kind} address (see --webhook-allow)"
            raise UnsafeCallback(msg)

    def check_url(self, url: str | httpx.URL) -> httpx.URL:
        """The parsed URL if it may be registered; raises :class:`UnsafeCallback`."""
        text = str(url)
        if not text.lower().startswith(("http://", "https://")):
            msg = f"callback must be an http(s) URL, not {text[:200]!r}"
            raise UnsafeCallback(msg)
        if _CONTROL.search(text):
            msg = f"callback URL contains a control character or space: {text[:200]!r}"
            raise UnsafeCallback(msg)
        try:
            parsed = httpx.URL(text)
            host, userinfo, _port = parsed.host, parsed.userinfo, parsed.port
        except (httpx.InvalidURL, ValueError) as exc:  # IDNAError is a ValueError too
            msg = f"callback URL does not parse: {exc}"
            raise UnsafeCallback(msg) from exc
        if userinfo:
            msg = "callback URL must not carry credentials (user:password@)"
            raise UnsafeCallback(msg)
        if not host:
            msg = f"callback URL has no host: {text[:200]!r}"
            raise UnsafeCallback(msg)
        name = host.lower().rstrip(".")
        if name not in self.hosts:
            if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
                msg = f"refused callback to {host}: a loopback address (see --webhook-allow)"
                raise UnsafeCallback(msg)
            ip = literal_address(host)
            if ip is not None:
                self.check_address(ip, str(ip))
        return parsed

    async def resolve(self, url: str | httpx.URL) -> Target:
        """Check ``url``, resolve its host and check every address; the target to connect to.

        Raises:
            UnsafeCallback: the URL or one of its addresses is refused.
            OSError: the host does not resolve (``socket.gaierror``).
        """
        parsed = self.check_url(url)
        host = parsed.host
        name_allowed = host.lower().rstrip(".") in self.hosts
        literal = literal_address(host)
        if literal is not None:
            return Target(parsed, literal, host)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            msg = f"cannot resolve {host!r}: {exc.strerror}"
            raise socket.gaierror(exc.errno, msg) from exc
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
        if not addresses:
            msg = f"callback host {host!r} resolves to no address"
            raise OSError(msg)
        if not name_allowed:
            for ip in addresses:
                self.check_address(ip, f"{host} ({ip})")
        return Target(parsed, addresses[0], host)
