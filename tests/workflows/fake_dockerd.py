#!/usr/bin/env python3
"""fake_dockerd.py - just enough of the Docker Engine API for the docker CLI to send one
`docker create`, so a test sees what the CLI made of `--env-file FILE`: the CLI parses
the file itself (client side) and sends the result as "Env" in POST /containers/create.

    fake_dockerd.py SOCKET OUT     (then: DOCKER_HOST=unix://SOCKET docker create ...)

Answers /_ping (HEAD and GET) with OK and API version 1.41, writes the body of the first
containers/create request to OUT and answers it with an error (no container is made).
Every other endpoint gets 404 naming the two it serves, as a daemon answers an unknown
route (the test needs no more of the API); it serves until killed."""
import http.server
import os
import socketserver
import sys


# The answer to any route but /_ping and /containers/create.
UNKNOWN = b'{"message": "fake_dockerd: unknown route; this daemon serves only /_ping and /containers/create"}'


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Api-Version", "1.41")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.reply(200, b"OK", "text/plain")

    def do_GET(self):
        if self.path.endswith("/_ping"):
            self.reply(200, b"OK", "text/plain")
        else:
            self.reply(404, UNKNOWN)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if "/containers/create" in self.path:
            with open(OUT, "wb") as f:
                f.write(body)
            self.reply(500, b'{"message": "fake_dockerd: request captured"}')
        else:
            self.reply(404, UNKNOWN)


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        conn, _ = super().get_request()
        return conn, ("local", 0)


if __name__ == "__main__":
    SOCK, OUT = sys.argv[1], sys.argv[2]
    if os.path.exists(SOCK):
        os.unlink(SOCK)
    Server(SOCK, Handler).serve_forever()
