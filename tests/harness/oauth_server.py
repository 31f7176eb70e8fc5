"""A real OAuth 2.1 authorization server for the hosted-mode tests, built on authlib: client
credentials token issuance (with the RFC 8707 `resource` parameter as the token's audience), RFC 7662
token introspection and RFC 8414 metadata, over HTTP on 127.0.0.1.

    python -m harness.oauth_server --port PORT

Clients (client_secret_basic or client_secret_post at the token endpoint):
- `agent` / `agent-secret`: tokens for 3600 s, any of the scopes `mcp:tools profile`;
- `agent-short` / `short-secret`: the same, but tokens expire after 1 second;
- `mcp-server` / `introspection-secret`: the resource server, the only client allowed to introspect.
"""

from __future__ import annotations

import argparse
import json
import secrets
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Request, TokenMixin, grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7662 import IntrospectionEndpoint

SCOPES = ["mcp:tools", "profile"]
INTROSPECTOR = "mcp-server"


@dataclass
class Client(ClientMixin):
    client_id: str
    client_secret: str
    expires_in: int = 3600
    grant_types: tuple[str, ...] = ("client_credentials",)

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> None:
        return None

    def get_allowed_scope(self, scope: str | None) -> str:
        return " ".join(s for s in (scope or "").split() if s in SCOPES)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return False

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return False

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


CLIENTS = {
    "agent": Client("agent", "agent-secret"),
    "agent-short": Client("agent-short", "short-secret", expires_in=1),
    INTROSPECTOR: Client(INTROSPECTOR, "introspection-secret", grant_types=()),
}


@dataclass
class Token(TokenMixin):
    access_token: str
    client_id: str
    scope: str
    issued_at: int
    expires_in: int
    audience: str | None  # the RFC 8707 resource the client asked the token for

    def check_client(self, client: ClientMixin) -> bool:
        return client.get_client_id() == self.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def is_expired(self) -> bool:
        return self.issued_at + self.expires_in <= time.time()

    def is_revoked(self) -> bool:
        return False

    def get_user(self) -> None:
        return None

    def get_client(self) -> ClientMixin:
        return CLIENTS[self.client_id]


class FormRequest(OAuth2Request):
    """An HTTP request as authlib's endpoints read it: method, URL, headers and the form body."""

    def __init__(self, method: str, uri: str, headers: Any, form: dict[str, str]) -> None:
        super().__init__(method, uri, headers=headers)
        self.payload = BasicOAuth2Payload(form)
        self._form = form

    @property
    def args(self) -> dict[str, str]:
        return {}

    @property
    def form(self) -> dict[str, str]:
        return self._form


class Introspection(IntrospectionEndpoint):
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def query_token(self, token_string: str, token_type_hint: str | None) -> Token | None:
        return self.server.tokens.get(token_string)

    def check_permission(self, token: Token, client: ClientMixin, request: Any) -> bool:
        return client.get_client_id() == INTROSPECTOR

    def introspect_token(self, token: Token) -> dict[str, Any]:
        payload = {
            "active": True,
            "client_id": token.client_id,
            "token_type": "Bearer",
            "scope": token.scope,
            "sub": token.client_id,
            "iss": self.server.issuer,
            "exp": token.issued_at + token.expires_in,
            "iat": token.issued_at,
        }
        if token.audience:
            payload["aud"] = token.audience
        return payload


class Server(AuthorizationServer):
    def __init__(self, issuer: str) -> None:
        super().__init__(scopes_supported=SCOPES)
        self.issuer = issuer
        self.tokens: dict[str, Token] = {}
        self.lock = threading.Lock()
        generator = BearerTokenGenerator(lambda *args, **kwargs: secrets.token_urlsafe(32), None, self._expires_in)
        self.register_token_generator("default", generator)
        self.register_grant(grants.ClientCredentialsGrant)
        self.register_endpoint(Introspection)

    @staticmethod
    def _expires_in(client: Client, grant_type: str) -> int:
        return client.expires_in

    def query_client(self, client_id: str) -> Client | None:
        return CLIENTS.get(client_id)

    def save_token(self, token: dict[str, Any], request: FormRequest) -> None:
        with self.lock:
            self.tokens[token["access_token"]] = Token(
                token["access_token"],
                request.client.get_client_id(),
                token.get("scope", ""),
                int(time.time()),
                int(token["expires_in"]),
                request.form.get("resource"),
            )

    def create_oauth2_request(self, request: FormRequest) -> FormRequest:
        return request

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> tuple[int, bytes, list]:
        return status, (json.dumps(body) if isinstance(body, dict) else body or "").encode(), headers

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass  # no listeners

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 authorization server metadata."""
        return {
            "issuer": self.issuer,
            "token_endpoint": f"{self.issuer}/token",
            "introspection_endpoint": f"{self.issuer}/introspect",
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "scopes_supported": SCOPES,
            "response_types_supported": [],
        }


def serve(port: int) -> None:
    issuer = f"http://127.0.0.1:{port}"
    server = Server(issuer)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
            self.send_response(status)
            for name, value in headers:
                if name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/.well-known/oauth-authorization-server":
                self._reply(200, json.dumps(server.metadata()).encode(), [("content-type", "application/json")])
            else:
                self._reply(404, b"{}", [("content-type", "application/json")])

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            form = dict(parse_qsl(self.rfile.read(length).decode()))
            request = FormRequest("POST", f"{issuer}{self.path}", self.headers, form)
            if self.path == "/token":
                self._reply(*server.create_token_response(request))
            elif self.path == "/introspect":
                self._reply(*server.create_endpoint_response("introspection", request))
            else:
                self._reply(404, b"{}", [("content-type", "application/json")])

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    serve(parser.parse_args().port)


if __name__ == "__main__":
    main()
