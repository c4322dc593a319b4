"""The address guard for URLs a project chose: what it refuses, what the operator may allow,
and that a connection goes to the address that was checked."""

from __future__ import annotations

import ipaddress
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from checks.suite import outbound
from checks.suite.outbound import Allow, Refused, check_url, refusal
from tests.receiver import Receiver


@pytest.fixture
def server() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


# --- what is refused ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("64:ff9b::a00:1", "10.0.0.1) is a private"),  # NAT64
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("fd12:3456::1", "private"),
        ("100.64.0.1", "not a public address"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),  # noqa: S104 - an address refused, not one bound
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
    ],
)
def test_addresses_that_are_not_public_are_refused(address: str, kind: str) -> None:
    reason = refusal(address)
    assert reason is not None and kind in reason


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert refusal(address) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.1/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://10.0.0.1/",
        "http://[::1]:6379/",
        "http://localhost:5432/",
        "https://LOCALHOST./",
    ],
)
def test_each_spelling_is_checked_as_the_address_it_resolves_to(url: str) -> None:
    with pytest.raises(Refused, match="RECEIPTS_OUTBOUND_ALLOW"):
        check_url(url, Allow())


def test_a_name_that_does_not_resolve_passes_only_when_asked_to(monkeypatch: pytest.MonkeyPatch) -> None:
    def nowhere(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", nowhere)
    check_url("https://hooks.example.com/r", Allow(), unresolved_ok=True)
    with pytest.raises(Refused, match="does not resolve"):
        check_url("https://hooks.example.com/r", Allow())


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://x.example.com/", "http:///nohost", "http://[::1"]
)
def test_only_http_urls_with_a_host_pass(url: str) -> None:
    with pytest.raises(Refused):
        check_url(url, Allow())


# --- what the operator allows ---------------------------------------------------------------


def test_the_allow_list_takes_networks_and_host_names() -> None:
    allow = Allow.parse(" 127.0.0.1/32, 10.1.0.0/16 ,judge.internal, [::1], ")
    assert allow.networks == (
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("10.1.0.0/16"),
        ipaddress.ip_network("::1/128"),
    )
    assert allow.hosts == frozenset({"judge.internal"})
    assert refusal("127.0.0.1", allow) is None and refusal("10.1.2.3", allow) is None
    assert refusal("::ffff:127.0.0.1", allow) is None  # the same address, in IPv6 form
    assert refusal("127.0.0.2", allow) is not None and refusal("10.2.0.1", allow) is not None
    assert Allow.parse(None) == Allow.parse("") == Allow()


def test_a_host_name_allowed_is_reached_whatever_it_resolves_to() -> None:
    check_url("http://LocalHost.:11434/v1", Allow.parse("localhost"))
    with pytest.raises(Refused):
        check_url("http://127.0.0.1:11434/v1", Allow.parse("localhost"))  # the name, not its address


def test_an_entry_that_is_neither_network_nor_name_is_refused_with_its_setting() -> None:
    with pytest.raises(ValueError, match="RECEIPTS_OUTBOUND_ALLOW: 'judge internal!'"):
        Allow.parse("127.0.0.1/32,judge internal!")


# --- connecting -----------------------------------------------------------------------------


def _post(url: str, allow: Allow | None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=b"{}", method="POST")  # noqa: S310 - http only
    try:
        with outbound.opener(allow).open(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_a_refused_address_is_never_connected_to(server: Receiver) -> None:
    for host in ("127.1", "0x7f000001", "[::ffff:127.0.0.1]", "localhost"):
        with pytest.raises(Refused):
            _post(f"http://{host}:{server.port}/hook", Allow())
    assert server.requests == []
    assert _post(f"http://127.0.0.1:{server.port}/hook", Allow.parse("127.0.0.1/32")) == (200, b"received")
    assert server.requests == ["POST /hook"]


def test_no_redirect_is_followed_checked_or_not() -> None:
    with Receiver(host="127.0.0.2") as inside:
        with Receiver(location=f"http://127.0.0.2:{inside.port}/private") as hop:
            url = f"http://127.0.0.1:{hop.port}/hook"
            assert _post(url, Allow.parse("127.0.0.1/32"))[0] == 302
            assert _post(url, None)[0] == 302  # the operator's own URLs follow none either
        assert inside.requests == []
        assert hop.requests == ["POST /hook", "POST /hook"]


def test_the_connection_goes_to_the_address_that_was_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name that resolves to an allowed address for the check and to another one a moment
    later (DNS rebinding) is still connected to the address checked: it is looked up once."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    with Receiver(host="127.0.0.1") as checked, Receiver(host="127.0.0.2") as rebound:

        def rebinding(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
            if host != "rebind.test":
                return real(host, port, *args, **kwargs)
            lookups.append(host)
            address = "127.0.0.1" if len(lookups) == 1 else "127.0.0.2"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

        monkeypatch.setattr(socket, "getaddrinfo", rebinding)
        allow = Allow.parse("127.0.0.1/32")
        status, _ = _post(f"http://rebind.test:{checked.port}/hook", allow)
        assert status == 200 and checked.requests == ["POST /hook"]
        assert lookups == ["rebind.test"]
        # Resolved again, it points where it may not: refused, not connected.
        with pytest.raises(Refused, match="rebind.test resolves to 127.0.0.2"):
            _post(f"http://rebind.test:{rebound.port}/hook", allow)
        assert rebound.requests == []


def test_tls_keeps_the_host_name_while_connecting_to_the_checked_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The HTTPS connection is made to the address checked, with the name kept for SNI and
    the certificate: here the handshake starts (and fails on a plain HTTP server)."""
    seen: list[tuple[str, int]] = []
    real = socket.create_connection

    def record(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        seen.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", record)
    with Receiver() as plain:
        with pytest.raises(urllib.error.URLError):
            _post(f"https://localhost:{plain.port}/hook", Allow.parse("localhost"))
    assert seen and seen[0][0] in ("127.0.0.1", "::1") and seen[0][1] == plain.port
