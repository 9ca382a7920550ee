#!/usr/bin/env python3
"""A keep-alive HTTP/1.1 client on Python's socket module (no code of ours): one connection, GET PATH COUNT times,
INTERVAL seconds apart, each answer read whole by its Content-Length; then silence until the server closes the
connection. Writes "<answers> <closed> <seconds of silence>" to OUT.

Usage: keepalive_client.py PORT PATH COUNT INTERVAL OUT (FastPathTests: the idle timeout)."""
import socket
import sys
import time

port, path, count, interval, out = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
s = socket.create_connection(("127.0.0.1", port), timeout=60)
answers = 0
for _ in range(count):
    s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: test\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data or len(data) < data.index(b"\r\n\r\n") + 4 + int(data.split(b"Content-Length: ")[1].split(b"\r\n")[0]):
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("closed after %d answers" % answers)
        data += chunk
    answers += 1
    time.sleep(interval)  # the client's pace, not a wait for an event
started = time.time()
closed = s.recv(1) == b""
with open(out, "w") as f:
    f.write("%d %s %.1f" % (answers, closed, time.time() - started))
