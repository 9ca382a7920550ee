#!/usr/bin/env python3
"""Pipelines GET PATH... and then GET /healthz with Connection: close down one connection in one write (Python's
socket and ssl modules, no code of ours), and writes every byte the server sent until it closed to OUT.

Usage: pipelining_client.py [--tls CA_FILE [--read-after FILE]] PORT OUT PATH... (FastPathTests: answers in the order
of the requests; --tls: HTTPS, HTTP/1.1 by ALPN, with a 4 KiB receive buffer, so the server's answers wait for the
client: HTTPConventionsTests, a client pipelining over TLS; --read-after FIFO: nothing is read until a byte is written
to the named pipe FIFO, waited for at most 60 s times TILECACHE_TEST_TIME_SCALE, so the server's answers fill what the
connection holds however fast either side is)."""
import os
import select
import socket
import ssl
import sys

arguments = sys.argv[1:]
tls = arguments[0] == "--tls"
ca_file = arguments[1] if tls else None
arguments = arguments[2:] if tls else arguments
read_after = None
if arguments[0] == "--read-after":
    # Opened for reading and writing, so that opening never waits for a writer and no end of file is seen before one.
    read_after, arguments = os.open(arguments[1], os.O_RDWR), arguments[2:]
port, out, paths = int(arguments[0]), arguments[1], arguments[2:]
requests = b"".join(b"GET " + p.encode() + b" HTTP/1.1\r\nHost: test\r\n\r\n" for p in paths)
requests += b"GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
if tls:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(60)
    s.connect(("127.0.0.1", port))
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["http/1.1"])
    s = context.wrap_socket(s, server_hostname="127.0.0.1")
else:
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
s.sendall(requests)
if read_after is not None:
    timeout = 60 * float(os.environ.get("TILECACHE_TEST_TIME_SCALE") or 1)
    if not select.select([read_after], [], [], timeout)[0]:
        sys.exit(f"nothing written to the --read-after pipe within {timeout} s")
data = bytearray()
while True:
    try:
        chunk = s.recv(65536)
    except ssl.SSLError:  # a close without close_notify
        break
    if not chunk:
        break
    data += chunk
with open(out, "wb") as f:
    f.write(data)
