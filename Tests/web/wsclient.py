"""A WebSocket client in the standard library, for tests that must do what a browser will
not: forge headers, send oversized or binary frames, stop reading."""
import base64
import json
import os
import socket
import struct


class WebSocket:
    def __init__(self, port, origin=None, cookie=None, path="/ws", forwarded_for=None, timeout=15):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        # As browsers do: small frames go at once (Nagle would hold a ping behind a set).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        head = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n") % (path, port, key)
        if origin:
            head += "Origin: %s\r\n" % origin
        if cookie:
            head += "Cookie: %s\r\n" % cookie
        if forwarded_for:
            head += "X-Forwarded-For: %s\r\n" % forwarded_for
        self.sock.sendall((head + "\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, self.buffer = data.partition(b"\r\n\r\n")
        self.status = int(head.split(b" ")[1]) if head else 0

    def send(self, request=None, raw=None, opcode=1):
        data = raw if raw is not None else json.dumps(request).encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            header = bytes([0x80 | opcode, 0x80 | n])
        elif n < 65536:
            header = bytes([0x80 | opcode, 0x80 | 126]) + struct.pack(">H", n)
        else:
            header = bytes([0x80 | opcode, 0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def receive(self):
        """(opcode, message): a text frame's JSON, another frame's bytes; (None, None) at the end."""
        while True:
            b = self.buffer
            if len(b) >= 2:
                n, offset = b[1] & 0x7F, 2
                if n == 126:
                    n, offset = struct.unpack(">H", b[2:4])[0], 4
                elif n == 127:
                    n, offset = struct.unpack(">Q", b[2:10])[0], 10
                if len(b) >= offset + n:
                    opcode, data, self.buffer = b[0] & 0x0F, b[offset:offset + n], b[offset + n:]
                    return opcode, (json.loads(data) if opcode == 1 else data)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return None, None
            self.buffer += chunk

    def next_event(self, name):
        """The next text message whose event is `name` (others are skipped); None at the end."""
        while True:
            opcode, message = self.receive()
            if opcode is None or opcode == 8:
                return None
            if opcode == 1 and message.get("event") == name:
                return message

    def close(self):
        self.sock.close()
