"""Requests the server makes on someone else's behalf (website crawls, handoff webhooks):
only to global addresses unless the deployment's allow-list names the host, and never past
a deadline.

The check happens where the connection is made: the host is resolved once, every address it
resolves to is checked, and the socket connects to a checked address, so a name that resolves
differently a moment later (DNS rebinding) changes nothing. Redirects are never followed
automatically: a caller follows each one itself, and its request goes through the same check.

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


def is_public(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


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
                f"{host} is the non-public address {address}: not requested "
                "(allow it with ASKDOCS_ALLOWED_PRIVATE_HOSTS)"
                if host.lower() == text.lower()
                else f"{host} resolves to the non-public address {address}: not requested "
                "(allow it with ASKDOCS_ALLOWED_PRIVATE_HOSTS)"
            )
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise httpcore.ConnectError(f"cannot resolve {host}")
    return addresses


def refusal(url: str) -> str:
    """Why a URL given in a form would not be requested ("" when it would): for a clear form
    error at once, rather than a failed sync or delivery later."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "Enter an http or https URL."
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        checked_addresses(parts.hostname, port, allow_list())
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


def client(
    *, timeout: float, headers: dict[str, str] | None = None, allowed: AllowList | None = None
) -> httpx.Client:
    """An httpx client whose every connection is checked, under any deadline in force, that
    never follows a redirect by itself and ignores proxy settings in the environment (a
    proxy would connect for us, unchecked)."""
    transport = httpx.HTTPTransport()
    # httpx builds its connection pool without a way to pass a network backend.
    transport._pool._network_backend = _Backend(allowed or allow_list())
    return httpx.Client(
        transport=transport, timeout=timeout, headers=headers, follow_redirects=False
    )
