#!/usr/bin/env python3
"""A minimal https availability service for tests run outside Python's own process (the
systemd boot test): GET /users/NAME answers 200 (taken) for names starting with "taken",
404 (available) for the rest. Prints its port and process id on the first line once it
listens.

usage: https_service.py CERT.pem KEY.pem
"""
import http.server
import os
import ssl
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        name = self.path.rsplit("/", 1)[-1]
        self.send_response(200 if name.startswith("taken") else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], os.getpid(), flush=True)
server.serve_forever()
