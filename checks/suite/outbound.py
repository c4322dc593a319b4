"""Requests to URLs that a project chose (its judge, its webhooks), kept off the server's own network.

A project admin can type any URL, and the server would send to it from where it stands: its loopback,
its private network, a cloud's metadata service. So before each connection the host name is resolved,
every address it resolves to is checked, and the connection is made to an address that was checked,
never to the name again (DNS rebinding gains nothing); the name is kept for the Host header and for TLS.

Refused unless the operator allows them (an ``Allow`` of networks and host names): every address that is not
public, the cloud metadata services, and IPv6 forms that carry such an IPv4 address (``::ffff:127.0.0.1``,
6to4, NAT64). Numeric spellings (``127.1``, ``0x7f000001``) go through the resolver that would connect, so
they are checked as the address they are. No redirect is followed (a 3xx is the answer), and a checked request
uses no proxy, which would resolve the name itself. Standard library only.
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
_METADATA = ("169.254.169.254", "169.254.170.2", "169.254.170.23", "100.100.100.200", "fd00:ec2::254")
METADATA = frozenset(map(ipaddress.ip_address, _METADATA))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(?:\.{_LABEL})*")

REFUSED_KINDS = (
    "loopback, private, shared, link-local, multicast, unspecified, reserved and cloud metadata addresses"
)


class Reasoned(Exception):
    """A failure whose ``reason`` says why in plain words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Refused(Reasoned):
    """A request this module will not make, and why; not an OSError, which urllib would wrap in a URLError."""


@dataclass(frozen=True)
class Allow:
    """The operator's exceptions: networks that may be reached, and host names whatever they resolve to."""

    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, entries: str | Iterable[str] | None) -> Allow:
        """From ``"127.0.0.1/32,judge.internal"`` or a list of such entries; raises ValueError."""
        items = entries.split(",") if isinstance(entries, str) else list(entries or ())
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for entry in filter(None, (raw.strip() for raw in items)):
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                if not _HOST_NAME.fullmatch(name := _host_key(entry)):
                    raise ValueError(
                        f"{ALLOW_SETTING}: {entry!r} is neither a network (such as 127.0.0.1/32 or "
                        "10.0.0.0/8) nor a host name (such as judge.internal)"
                    ) from None
                hosts.add(name)
        return cls(networks=tuple(networks), hosts=frozenset(hosts))


NOTHING = Allow()


def _host_key(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, where it carries one."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    teredo = address.teredo[1] if address.teredo else None
    nat64 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) if address in _NAT64 else None
    return address.ipv4_mapped or address.sixtofour or teredo or nat64


# What makes an address one not to reach (``is_<kind>``), in the order a refusal names it.
_KINDS = ("unspecified", "loopback", "link_local", "multicast", "reserved", "private")


def _kind(address: IPAddress) -> str | None:
    """What makes an address one not to reach, or None for a public one."""
    if address in METADATA:
        return "a cloud metadata service address"
    if kind := next((kind for kind in _KINDS if getattr(address, f"is_{kind}")), None):
        return "the unspecified address" if kind == "unspecified" else f"a {kind.replace('_', '-')} address"
    return None if address.is_global else "not a public address"


def refusal(address: str | IPAddress, allow: Allow = NOTHING) -> str | None:
    """Why this address may not be reached (``"127.0.0.1 is a loopback address"``), or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
    forms = [form for form in (ip, _embedded_ipv4(ip)) if form is not None]
    if any(form.version == net.version and form in net for form in forms for net in allow.networks):
        return None
    # The IPv4 address an IPv6 form carries says best what it is, so it is named first.
    for candidate in reversed(forms):
        if (kind := _kind(candidate)) is not None:
            shown = str(ip) if candidate == ip else f"{ip} (that is {candidate})"
            return f"{shown} is {kind}"
    return None


def resolve_checked(host: str, port: int, allow: Allow) -> list[tuple[Any, ...]]:
    """``getaddrinfo``, after checking every address it gives: Refused when any may not be reached (a
    name's owner chooses all of them, so one bad one is reason enough), OSError when none resolves."""
    name = _host_key(host)
    infos = socket.getaddrinfo(name, port, 0, socket.SOCK_STREAM)
    refusals = (refusal(str(info[4][0]), allow) for info in infos)
    reason = None if name in allow.hosts else next(filter(None, refusals), None)
    if reason is None:
        return infos
    try:
        ipaddress.ip_address(name)
    except ValueError:  # a name, not an address literal: say what it resolves to
        reason = f"{name} resolves to {reason.replace(' is ', ', which is ', 1)}"
    raise Refused(
        f"{reason}; requests to {REFUSED_KINDS} are refused unless the operator allows them ({ALLOW_SETTING})"
    )


def check_url(url: str, allow: Allow, *, unresolved_ok: bool = False) -> None:
    """Raises Refused unless url is http(s) with a host whose addresses may all be reached;
    ``unresolved_ok`` lets a name that does not resolve pass (a URL being saved: each request checks it)."""
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
    address: tuple[str, int], timeout: Any = None, source_address: Any = None, *, allow: Allow
) -> socket.socket:
    """``socket.create_connection`` to the host's checked addresses in turn, the name not resolved again."""
    host, port = address
    last: OSError | None = None
    for info in resolve_checked(host, port, allow):
        try:
            # An address literal: create_connection looks nothing up for it.
            return socket.create_connection((info[4][0], port), timeout, source_address)
        except OSError as exc:
            last = exc
    raise last or OSError(f"{host} has no address to connect to")


class _CheckedHandler(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    """Replaces both default handlers of an opener with connections through ``connect_checked``; the
    Host header and TLS (SNI, the certificate) go on with the host name as for any connection."""

    def __init__(self, allow: Allow) -> None:
        super().__init__()
        self._allow = allow

    def _connection(
        self, kind: type[http.client.HTTPConnection], *args: Any, **kwargs: Any
    ) -> http.client.HTTPConnection:
        made = kind(*args, **kwargs)
        made._create_connection = partial(connect_checked, allow=self._allow)  # type: ignore[attr-defined]
        return made

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(partial(self._connection, http.client.HTTPConnection), req)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = partial(self._connection, http.client.HTTPSConnection)
        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A redirect could point anywhere, and would carry the request's headers there: the 3xx is the answer.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def opener(allow: Allow | None) -> urllib.request.OpenerDirector:
    """An opener that follows no redirect; with ``allow`` (None: the operator's own URLs, not checked),
    every connection is checked and made directly, through no proxy."""
    if allow is None:
        return urllib.request.build_opener(_NoRedirect)
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), _CheckedHandler(allow), _NoRedirect)
