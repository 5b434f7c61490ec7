"""Requests the server makes on someone else's behalf (website crawls, handoff webhooks, a
project's model server): only to global addresses unless the deployment's allow-list names
the host, and never past a deadline.

The check happens where the connection is made: the host is resolved once, every address it
resolves to is checked, and the socket connects to a checked address, so a name that resolves
differently a moment later (DNS rebinding) changes nothing. Redirects are never followed
automatically: a caller follows each one itself, and its request goes through the same check.

An IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is global
only when the IPv4 address it carries is too: a translator on the way would deliver to it.

A deadline (`deadline(seconds)`) bounds a whole request, body included: every connect and
read is given at most the time that is left, so a server that sends one byte every few
seconds cannot keep a fetch alive.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
import time
import typing
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "outbound_deadline", default=None
)


class Refused(httpcore.ConnectError):
    """The host is, or resolves to, an address the deployment does not allow."""


#: How a refusal for a non-public address ends: the setting that admits it.
ALLOW_HINT = "(allow it with ASKDOCS_ALLOWED_PRIVATE_HOSTS)"


class DeadlinePassed(httpcore.ReadTimeout):
    """The request's deadline passed before it was done."""


@dataclass(frozen=True, slots=True)
class AllowList:
    """Hosts (as written in URLs) and networks a request may reach although they are not
    global: ASKDOCS_ALLOWED_PRIVATE_HOSTS, e.g. `127.0.0.1, 10.1.0.0/16, wiki.internal`."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        hosts: set[str] = set()
        networks: list[Network] = []
        for entry in (e.strip().lower().strip("[]") for e in entries):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                hosts.add(entry.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def admits(self, host: str, address: Address) -> bool:
        if host.lower().rstrip(".") in self.hosts:
            return True
        return any(address in network for network in self.networks)


def allow_list() -> AllowList:
    return AllowList.parse(settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS)


def server_allow_list(url: str) -> AllowList:
    """The allow-list for a model server: the deployment's, plus the server's own host when the
    deployment's settings name that server (OLLAMA_HOST, ASKDOCS_OPENAI_BASE_URL): the operator
    chose it, wherever it is. A project's own server URL is staff's say, and checked."""
    allowed = allow_list()
    configured = (settings.OLLAMA_HOST, settings.ASKDOCS_OPENAI_BASE_URL)
    origin = _origin(url)
    if origin is None or origin not in {_origin(server) for server in configured if server}:
        return allowed
    return AllowList(allowed.hosts | {origin[1]}, allowed.networks)


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) as a client would connect (a bare `host:port` is http)."""
    try:
        parts = urlsplit(url.strip() if "://" in url else f"http://{url.strip()}")
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    return (parts.scheme.lower(), host, port) if host else None


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: never global
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # SIIT's IPv4-translated addresses
_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated IPv4-compatible addresses


def carried_ipv4(address: Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries: IPv4-mapped and -compatible, SIIT, NAT64
    (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32, its server and client)."""
    if isinstance(address, ipaddress.IPv4Address):
        return []
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    carried = [address.ipv4_mapped] if address.ipv4_mapped else []
    if address in _NAT64 or address in _TRANSLATED or (address in _COMPATIBLE and int(low) > 1):
        carried.append(low)
    if address.sixtofour:
        carried.append(address.sixtofour)
    if address.teredo:
        carried.extend(address.teredo)
    return carried


def is_public(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address in _NAT64_LOCAL:
        return False
    return all(
        each.is_global and not each.is_multicast for each in (address, *carried_ipv4(address))
    )


def was_refused(exc: BaseException) -> bool:
    """Whether a failed request (httpx's error, or a client library's around it) was refused
    here, for its address, rather than failing on the network: no retry will change that."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, Refused):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def checked_addresses(host: str, port: int, allowed: AllowList) -> list[str]:
    """Every address `host` resolves to, when each is global or allowed; Refused otherwise
    (one private address among public ones refuses the host: it could be the one used)."""
    host = host.strip("[]")
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise httpcore.ConnectError(f"cannot resolve {host}: {error}") from error
    addresses: list[str] = []
    for *_, sockaddr in found:
        text = str(sockaddr[0]).split("%")[0]
        address = ipaddress.ip_address(text)
        if not is_public(address) and not allowed.admits(host, address):
            raise Refused(
                f"{host} is the non-public address {address}: not requested {ALLOW_HINT}"
                if host.lower() == text.lower()
                else f"{host} resolves to the non-public address {address}: not requested "
                f"{ALLOW_HINT}"
            )
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise httpcore.ConnectError(f"cannot resolve {host}")
    return addresses


def refusal(url: str, *, allowed: AllowList | None = None) -> str:
    """Why a URL given in a form would not be requested ("" when it would): for a clear form
    error at once, rather than a failed sync, delivery or answer later."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "Enter an http or https URL."
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        checked_addresses(parts.hostname, port, allowed or allow_list())
    except Refused as refused:
        return f"This address is not reachable from the server: {refused}."
    except (httpcore.ConnectError, ValueError):
        return ""  # not resolvable now: the fetch will say so when it happens
    return ""


# -- deadlines ----------------------------------------------------------------------------------


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Requests made in this block (in this thread) end within `seconds` in all; an outer
    deadline that is nearer stays in force."""
    ends = time.monotonic() + seconds
    outer = _deadline.get()
    token = _deadline.set(ends if outer is None else min(outer, ends))
    try:
        yield
    finally:
        _deadline.reset(token)


def deadline_passed() -> bool:
    ends = _deadline.get()
    return ends is not None and time.monotonic() >= ends - 0.01  # a socket may time out early


def _within_deadline(timeout: float | None) -> float | None:
    ends = _deadline.get()
    if ends is None:
        return timeout
    left = ends - time.monotonic()
    if left <= 0:
        raise DeadlinePassed("the deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _within_deadline(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _within_deadline(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(ssl_context, server_hostname, _within_deadline(timeout))
        return _Stream(tls)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.SyncBackend):
    """Resolves, checks, then connects to the checked address (TLS still verifies the name:
    httpcore hands the host name to the TLS layer separately)."""

    def __init__(self, allowed: AllowList) -> None:
        self.allowed = allowed

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        last: Exception | None = None
        for address in checked_addresses(host, port, self.allowed):
            try:
                stream = super().connect_tcp(
                    address, port, _within_deadline(timeout), local_address, socket_options
                )
            except httpcore.ConnectError as error:
                last = error
                continue
            return _Stream(stream)
        raise last or httpcore.ConnectError(f"cannot connect to {host}")

    def connect_unix_socket(self, *args: typing.Any, **kwargs: typing.Any) -> typing.NoReturn:
        raise Refused("unix sockets are not requested")


def transport(
    *, allowed: AllowList | None = None, limits: httpx.Limits | None = None
) -> httpx.HTTPTransport:
    """An httpx transport whose every connection is checked, under any deadline in force. A
    client given a transport ignores proxy settings in the environment (a proxy would connect
    for us, unchecked); its own `limits` too, hence `limits` here."""
    checked = httpx.HTTPTransport(limits=limits) if limits else httpx.HTTPTransport()
    # httpx builds its connection pool without a way to pass a network backend.
    checked._pool._network_backend = _Backend(allowed or allow_list())
    return checked


def client(
    *, timeout: float, headers: dict[str, str] | None = None, allowed: AllowList | None = None
) -> httpx.Client:
    """An httpx client over `transport()` that never follows a redirect by itself."""
    return httpx.Client(
        transport=transport(allowed=allowed),
        timeout=timeout,
        headers=headers,
        follow_redirects=False,
    )
