"""Real peers for the HTTP/1.1 client's tests, all on 127.0.0.1: a server that writes exactly the bytes a
test scripts (so chunk boundaries, early closes and keep-alive are under the test's control), a proxy
that tunnels CONNECT and forwards absolute-form requests while counting both, and a throw-away
certificate authority for TLS.

The proxy resolves every host name to 127.0.0.1: a test names its server ``model.test`` (which nothing
else resolves), so a request that arrives proves it went through the proxy.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Received:
    """One request as the server read it."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    connection: int  # which accepted connection (0, 1, ...) carried it


Answer = Callable[[Received, asyncio.StreamWriter], Awaitable[bool]]  # True: keep the connection open


class Listener:
    """A server on 127.0.0.1 (TLS with ``tls``) on a free port, for ``async with``."""

    tls: ssl.SSLContext | None
    port: int
    _server: asyncio.Server | None

    async def __aenter__(self: L) -> L:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._stopping()
        await self._server.wait_closed()

    async def _stopping(self) -> None:
        pass

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


L = TypeVar("L", bound=Listener)


@dataclass
class ScriptedServer(Listener):
    """Answers each request with ``answer`` (default: a small content-length body, kept alive)."""

    answer: Answer | None = None
    tls: ssl.SSLContext | None = None
    requests: list[Received] = field(default_factory=list)
    connections: int = 0
    closed: asyncio.Event = field(default_factory=asyncio.Event)  # set each time the server closes one
    port: int = 0
    _server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        number = self.connections
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                request_line, *lines = head.decode("latin-1").split("\r\n")[:-2]
                method, target, _ = request_line.split(" ", 2)
                headers = {}
                for line in lines:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                received = Received(method, target, headers, body, number)
                self.requests.append(received)
                answer = self.answer or ok
                if not await answer(received, writer):
                    return
        finally:
            writer.close()
            self.closed.set()


async def ok(request: Received, writer: asyncio.StreamWriter) -> bool:
    body = f"hello {request.target}".encode()
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    return True


@dataclass
class CountingProxy(Listener):
    """An HTTP proxy: ``CONNECT host:port`` opens a tunnel to 127.0.0.1:port and pipes bytes both ways;
    an absolute-form request (``POST http://host:port/path``) is forwarded to 127.0.0.1:port with the
    rest of the connection. ``refuse`` answers CONNECT with that status line instead."""

    connects: list[str] = field(default_factory=list)
    forwarded: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    refuse: str | None = None
    tls: ssl.SSLContext | None = None  # an https:// proxy
    port: int = 0
    _server: asyncio.Server | None = None
    _pipes: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    async def _stopping(self) -> None:
        for task in self._pipes:
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        request_line, *lines = head.decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        fields = {n.strip().lower(): v.strip() for n, _, v in (line.partition(":") for line in lines if line)}
        self.authorizations.append(fields.get("proxy-authorization"))
        if method == "CONNECT":
            self.connects.append(target)
            if self.refuse is not None:
                writer.write(f"HTTP/1.1 {self.refuse}\r\ncontent-length: 0\r\n\r\n".encode())
                await writer.drain()
                writer.close()
                return
            port = int(target.rsplit(":", 1)[1])
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            self.forwarded.append(target)
            authority = target.split("://", 1)[1].split("/", 1)[0]
            port = int(authority.rsplit(":", 1)[1]) if ":" in authority else 80
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
            up_writer.write(head)  # the server reads the absolute form as it is
        self._pipe(reader, up_writer)
        self._pipe(up_reader, writer)

    def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        async def pump() -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except ConnectionError:
                pass
            finally:
                sink.close()

        task = asyncio.get_running_loop().create_task(pump())
        self._pipes.add(task)
        task.add_done_callback(self._pipes.discard)


@dataclass(frozen=True)
class Authority:
    """A certificate authority made for one test session, and a server certificate it signed."""

    ca_file: Path
    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


# what a CA's key may do: sign certificates and revocation lists (strict verifiers want it said)
CA_KEY_USAGE = dict.fromkeys(
    (
        "content_commitment",
        "key_encipherment",
        "data_encipherment",
        "key_agreement",
        "encipher_only",
        "decipher_only",
    ),
    False,
) | dict.fromkeys(("digital_signature", "key_cert_sign", "crl_sign"), True)


def make_authority(directory: Path, names: tuple[str, ...] = ("model.test", "localhost")) -> Authority:
    """A CA and a certificate for ``names`` and 127.0.0.1, written as PEM files in ``directory``."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ink test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(**CA_KEY_USAGE), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alternatives: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
    alternatives.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    authority = Authority(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    authority.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    authority.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    authority.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return authority


@contextmanager
def served_in_a_thread(listener: L) -> Iterator[L]:
    """``listener`` running on an event loop of its own thread, for a test whose client is another
    process (``ink -p``); stopped on the way out."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-listener", daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(listener.__aenter__(), loop).result(10)
    try:
        yield listener
    finally:
        asyncio.run_coroutine_threadsafe(listener.__aexit__(None, None, None), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
