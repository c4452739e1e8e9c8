"""An OpenID provider's discovery document, key set and userinfo, served on loopback for tests.

Identity's checks of ID tokens are tested with tokens the test signs itself (forgeries beside a
genuine control) and its instances with sign-ins a test can start without a browser; the real
provider's sign-in, end to end, is tests/browser/test_provider_sign_in.py. Only loopback issuers are
accepted over plain HTTP (rummy_identity.provider.check_issuer), so this cannot stand in for a real one.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class LoopbackProvider:
    """What the provider serves (keys, algorithms, userinfo), and a count of each fetch."""

    port: int = 0
    keys: list[dict[str, Any]] = field(default_factory=list)
    algs: list[str] = field(default_factory=lambda: ["RS256", "ES256"])
    issuer_override: str = ""
    userinfo: dict[str, Any] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)
    bearer: list[str] = field(default_factory=list)

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def document(self, path: str, authorization: str) -> Any:
        """The JSON served at `path`, or None (404)."""
        self.hits[path] = self.hits.get(path, 0) + 1
        base = self.issuer.rstrip("/")
        if path == "/.well-known/openid-configuration":
            return {
                "issuer": self.issuer_override or self.issuer,
                "jwks_uri": f"{base}/keys",
                "userinfo_endpoint": f"{base}/userinfo",
                "id_token_signing_alg_values_supported": self.algs,
            }
        if path == "/keys":
            return {"keys": self.keys}
        if path == "/userinfo":
            self.bearer.append(authorization)
            return self.userinfo
        return None


@contextlib.contextmanager
def serving() -> Iterator[LoopbackProvider]:
    """A provider listening on a free loopback port until the block ends."""
    served = LoopbackProvider()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = served.document(self.path, self.headers.get("authorization", ""))
            data = json.dumps(body).encode()
            self.send_response(200 if body is not None else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
