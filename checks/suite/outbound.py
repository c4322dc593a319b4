"""Requests to URLs that a project chose (its judge, its webhooks), kept off the server's own network.

A project admin can type any URL, and the server would send to it from where it stands:
its loopback, the private network around it, a cloud's metadata service. So before each
connection the host name is resolved and every address it resolves to is checked, and the
connection is then made to an address that was checked, never to the name again: a name
that resolves elsewhere a moment later (DNS rebinding) gains nothing. The name is kept for
the Host header and for TLS (SNI and the certificate check).

Refused unless the operator allows them: loopback, private, shared (100.64.0.0/10),
link-local, multicast, unspecified, reserved and every other address that is not public,
the cloud metadata services (169.254.169.254, fd00:ec2::254, …), and IPv6 forms that carry
such an IPv4 address (``::ffff:127.0.0.1``, 6to4, NAT64). Numeric spellings (``127.1``,
``0x7f000001``, ``2130706433``) are resolved by the same resolver that would connect, so
they are checked as the address they are.

The operator's exceptions are an ``Allow``: networks (``127.0.0.1/32``) and host names
(``judge.internal``), such as a judge on ``127.0.0.1:11434``. No redirect is followed (a
3xx is the answer), and no proxy from the environment is used for a checked request, since
a proxy would resolve the name itself. Standard library only: the suite's judge client and
the webhook deliveries share this module.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOW_SETTING = "RECEIPTS_OUTBOUND_ALLOW"

# Link-local or private already, named so that a refusal says what the address is.
METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "169.254.170.23", "100.100.100.200", "fd00:ec2::254")
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(?:\.{_LABEL})*")

REFUSED_KINDS = (
    "loopback, private, shared, link-local, multicast, unspecified, reserved and cloud metadata addresses"
)


class Refused(Exception):
    """A request this module will not make; ``reason`` says why in plain words.

    Not an OSError, so that urllib passes it through as it is instead of as a URLError."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Allow:
    """The operator's exceptions: networks whose addresses may be reached, and host names
    that may be reached whatever they resolve to."""

    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, entries: str | Iterable[str] | None) -> Allow:
        """From ``"127.0.0.1/32,judge.internal"`` or a list of such entries; raises ValueError
        for an entry that is neither a network nor a host name."""
        if entries is None:
            return cls()
        items = entries.split(",") if isinstance(entries, str) else list(entries)
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for raw in items:
            entry = raw.strip()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = _host_key(entry)
            if not _HOST_NAME.fullmatch(name):
                raise ValueError(
                    f"{ALLOW_SETTING}: {entry!r} is neither a network (such as 127.0.0.1/32 or "
                    "10.0.0.0/8) nor a host name (such as judge.internal)"
                )
            hosts.add(name)
        return cls(networks=tuple(networks), hosts=frozenset(hosts))

    def allows_host(self, host: str) -> bool:
        return _host_key(host) in self.hosts

    def allows_address(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.networks)


NOTHING = Allow()


def _host_key(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, where it carries one."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _kind(address: IPAddress) -> str | None:
    """What makes an address one not to reach, or None for a public one."""
    if address in METADATA:
        return "a cloud metadata service address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "not a public address"
    return None


def refusal(address: str | IPAddress, allow: Allow = NOTHING) -> str | None:
    """Why this address may not be reached (``"127.0.0.1 is a loopback address"``), or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
    embedded = _embedded_ipv4(ip)
    for candidate in (ip, embedded):
        if candidate is not None and allow.allows_address(candidate):
            return None
    # The IPv4 address an IPv6 form carries says best what it is, so it is named first.
    for candidate in (embedded, ip):
        kind = _kind(candidate) if candidate is not None else None
        if kind is not None:
            shown = str(ip) if candidate == ip else f"{ip} (that is {candidate})"
            return f"{shown} is {kind}"
    return None


def resolve_checked(host: str, port: int, allow: Allow) -> list[tuple[Any, ...]]:
    """``getaddrinfo`` for host and port, after checking every address it gives.

    Raises Refused when any of them may not be reached (a name's owner chooses all of its
    addresses, so one bad one is reason enough), and OSError when the name does not resolve."""
    name = _host_key(host)
    infos = socket.getaddrinfo(name, port, 0, socket.SOCK_STREAM)
    if allow.allows_host(name):
        return infos
    for info in infos:
        reason = refusal(str(info[4][0]), allow)
        if reason is None:
            continue
        if not _is_literal(name):
            reason = f"{name} resolves to {reason.replace(' is ', ', which is ', 1)}"
        raise Refused(
            f"{reason}; requests to {REFUSED_KINDS} are refused unless the operator allows them "
            f"({ALLOW_SETTING})"
        )
    return infos


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def check_url(url: str, allow: Allow, *, unresolved_ok: bool = False) -> None:
    """Raises Refused unless url is http(s) with a host whose addresses may all be reached.

    ``unresolved_ok``: a name that does not resolve now passes (when a URL is saved; every
    request checks it again)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise Refused(f"{url} is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not host:
        raise Refused(f"{url} is not an http:// or https:// URL with a host")
    try:
        resolve_checked(host, port or (443 if parts.scheme == "https" else 80), allow)
    except OSError:
        if not unresolved_ok:
            raise Refused(f"{host} does not resolve to an address") from None


def connect_checked(
    host: str, port: int, allow: Allow, timeout: Any = None, source_address: Any = None
) -> socket.socket:
    """A connection to one of host's checked addresses, tried in the resolver's order; the
    name is not resolved again between the check and the connection."""
    last: OSError | None = None
    for info in resolve_checked(host, port, allow):
        try:
            # An address literal: create_connection looks nothing up for it.
            return socket.create_connection((info[4][0], port), timeout, source_address)
        except OSError as exc:
            last = exc
    raise last or OSError(f"{host} has no address to connect to")


class _Checked:
    """Makes an http.client connection connect through ``connect_checked``."""

    _allow: Allow

    def _check_connections(self, allow: Allow) -> None:
        self._allow = allow
        # http.client opens its socket with this attribute; everything else (the Host
        # header, TLS with the host name) goes on as for any connection.
        self._create_connection = self._connect  # type: ignore[attr-defined]

    def _connect(
        self, address: tuple[str, int], timeout: Any = None, source_address: Any = None
    ) -> socket.socket:
        host, port = address
        return connect_checked(host, port, self._allow, timeout, source_address)


class CheckedHTTPConnection(_Checked, http.client.HTTPConnection):
    def __init__(self, *args: Any, allow: Allow, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._check_connections(allow)


class CheckedHTTPSConnection(_Checked, http.client.HTTPSConnection):
    def __init__(self, *args: Any, allow: Allow, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._check_connections(allow)


class _CheckedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, allow: Allow) -> None:
        super().__init__()
        self._allow = allow

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(partial(CheckedHTTPConnection, allow=self._allow), req)  # type: ignore[arg-type]


class _CheckedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, allow: Allow) -> None:
        super().__init__()
        self._allow = allow

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = partial(CheckedHTTPSConnection, allow=self._allow)
        return self.do_open(connection, req, context=self._context)  # type: ignore[arg-type,attr-defined]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A redirect could point anywhere, and would carry the request's headers there: the
    # 3xx is the answer.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def opener(allow: Allow | None) -> urllib.request.OpenerDirector:
    """An opener that follows no redirect. With ``allow``, every connection is checked and
    made directly (no proxy); None is for the operator's own URLs, which are not checked."""
    if allow is None:
        return urllib.request.build_opener(_NoRedirect)
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        _CheckedHTTPHandler(allow),
        _CheckedHTTPSHandler(allow),
        _NoRedirect,
    )
