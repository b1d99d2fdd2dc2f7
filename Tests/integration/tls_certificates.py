"""A throwaway CA with a server certificate (for localhost and 127.0.0.1) and a client certificate, made with the
`openssl` command, for Redis over TLS in the cluster tests."""
from __future__ import annotations

import pathlib
import ssl
import subprocess

import pytest


class Certificates:
    def __init__(self, directory: pathlib.Path):
        self.dir = directory
        key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        self._openssl("req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=LiveControls test CA")
        (directory / "server.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        for name, subject, ext in [("server", "localhost", ["-extfile", "server.ext"]), ("client", "livecontrols-node", [])]:
            self._openssl("req", *key, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={subject}")
            self._openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                          "-out", f"{name}.crt", "-days", "2", *ext)

    def _openssl(self, *args: str) -> None:
        subprocess.run(["openssl", *args], cwd=self.dir, check=True, capture_output=True, timeout=30)

    def path(self, name: str) -> str:
        return str(self.dir / name)

    def redis_args(self, port: int, client_auth: bool = False) -> list[str]:
        """redis-server arguments: TLS only, on `port`; replication over TLS too."""
        return ["--port", "0", "--tls-port", str(port), "--tls-cert-file", self.path("server.crt"),
                "--tls-key-file", self.path("server.key"), "--tls-ca-cert-file", self.path("ca.crt"),
                "--tls-auth-clients", "yes" if client_auth else "no", "--tls-replication", "yes"]

    def node_args(self) -> list[str]:
        """livecontrols flags: trust the test CA, show the client certificate."""
        return ["--redis-tls-ca-cert-file", self.path("ca.crt"), "--redis-tls-cert-file", self.path("client.crt"),
                "--redis-tls-key-file", self.path("client.key")]

    def client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.path("ca.crt"))
        context.load_cert_chain(self.path("client.crt"), self.path("client.key"))
        return context


@pytest.fixture
def tls_certificates(tmp_path):
    return Certificates(tmp_path)
