#!/usr/bin/env python3
"""Pipelines GET PATH... and then GET /healthz with Connection: close down one connection in one write (Python's
socket module, no code of ours), and writes every byte the server sent until it closed to OUT.

Usage: pipelining_client.py PORT OUT PATH... (FastPathTests: answers in the order of the requests)."""
import socket
import sys

port, out, paths = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
requests = b"".join(b"GET " + p.encode() + b" HTTP/1.1\r\nHost: test\r\n\r\n" for p in paths)
requests += b"GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
s = socket.create_connection(("127.0.0.1", port), timeout=20)
s.sendall(requests)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
with open(out, "wb") as f:
    f.write(data)
