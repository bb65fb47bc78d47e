#!/usr/bin/env python3
"""A stand-in for signupd.service's main process that leaves a damaged handover state:
restart_handover.py's `corrupt` mode runs it as ExecStart= (a drop-in), so that the real
signupd started next finds stored client connections and a state memfd whose checksum
does not match. It greets each client like signupd, keeps every connection in the file
descriptor store, and on SIGUSR1 (the restart signal) stores the damaged state and exits.
"""
import json
import os
import signal
import socket
import struct
import sys

listener = socket.socket(fileno=3)  # LISTEN_FDS: the socket unit's listener comes first
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
address = os.environ["NOTIFY_SOCKET"]
notify.connect("\0" + address[1:] if address.startswith("@") else address)


def sd_notify(state, fds=()):
    notify.sendmsg([state.encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))] if fds else [])


stored = []


def restart(*_):
    # A header of the current format (version 2) over a payload whose checksum is wrong.
    payload = b'{"connections":[],"sessions":[]}'
    state = b"SGNDHOVR" + struct.pack("<IQI", 2, len(payload), 0xDEADBEEF) + payload
    fd = os.memfd_create("signupd-handover", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(fd, state)
    import fcntl
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
    sd_notify("FDSTORE=1\nFDNAME=handover-state", [fd])
    sd_notify("STOPPING=1")
    sys.exit(0)


signal.signal(signal.SIGUSR1, restart)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
sd_notify("READY=1\nSTATUS=stand-in leaving a damaged state")
hello = json.dumps({"event": "hello", "protocol": "signup/1", "server": "stand-in", "forms": [], "limits": {}}) + "\n"
while True:
    connection, _ = listener.accept()
    # Stored before the greeting: a client that has its hello is in the store.
    sd_notify("FDSTORE=1\nFDNAME=c.standin.%d" % len(stored), [connection.fileno()])
    connection.sendall(hello.encode())
    stored.append(connection)
