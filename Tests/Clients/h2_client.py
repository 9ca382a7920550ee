#!/usr/bin/env python3
"""An HTTP/2 client on hyper-h2 (PyPI `h2`, no code of ours) and Python's ssl module: one TLS connection with ALPN h2,
every request sent at once, each on its own stream; each answer read whole. Then silence until the server ends the
connection. Writes JSON to OUT: {"answers": [{"request", "status", "source", "length", "contentLength"}...] in the
order of the requests, "goaway": the last stream id of the server's GOAWAY frame (or null), "closed": whether the
server closed the connection, "silence": seconds from the last answer to the close, "indexed": the names in the HPACK dynamic table the server's
answers built (hpack's decoder)}.

Usage: h2_client.py [--mute] [--window=N] PORT CA_FILE OUT "[OPEN ]METHOD PATH"... (--mute: the server's PING after its
GOAWAY is never acknowledged; --window=N: the streams' initial flow-control window, sent before the requests; OPEN: the request's HEADERS without END_STREAM, and no more of it: its answer's "reset" says whether
the server reset the stream) (HTTPConventionsTests: the HTTPS server's HTTP/2 streams and
idle timeout; run with .build/h2-venv's Python, scripts/check-envs.sh h2)."""
import json
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings
import hyperframe.frame

arguments = sys.argv[1:]
mute = "--mute" in arguments  # never acknowledge the server's PING after its GOAWAY
window = next((int(a.split("=", 1)[1]) for a in arguments if a.startswith("--window=")), None)  # streams' initial window
arguments = [a for a in arguments if a != "--mute" and not a.startswith("--window=")]
port, ca_file, out, requests = int(arguments[0]), arguments[1], arguments[2], arguments[3:]
context = ssl.create_default_context(cafile=ca_file)
context.set_alpn_protocols(["h2"])
sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=60), server_hostname="127.0.0.1")
if sock.selected_alpn_protocol() != "h2":
    raise SystemExit("ALPN chose %r, not h2" % sock.selected_alpn_protocol())
connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
connection.initiate_connection()
if window is not None:
    connection.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
answers = {}
for request in requests:
    left_open = request.startswith("OPEN ")
    method, path = request[5 if left_open else 0:].split(" ", 1)
    stream = connection.get_next_available_stream_id()
    answers[stream] = {"request": request, "status": None, "source": None, "length": 0, "contentLength": None, "ended": False,
                       "reset": False}
    connection.send_headers(stream, [(":method", method), (":path", path), (":scheme", "https"),
                                     (":authority", "127.0.0.1:%d" % port), ("accept", "image/jpeg,*/*")], end_stream=not left_open)
sock.sendall(connection.data_to_send())



def record_head(stream_id, headers):
    """The status, source and length an answer's head says, from its (name, value) pairs."""
    headers = dict(headers)
    answer = answers[stream_id]
    answer["status"] = int(headers[":status"])
    answer["source"] = headers.get("x-tilecache-source")
    answer["contentLength"] = int(headers["content-length"]) if "content-length" in headers else None


def handle(event):
    global goaway, last_answer
    if isinstance(event, h2.events.ResponseReceived):
        record_head(event.stream_id, event.headers)
    elif isinstance(event, h2.events.DataReceived):
        answers[event.stream_id]["length"] += len(event.data)
        connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
    elif isinstance(event, h2.events.StreamEnded):
        answers[event.stream_id]["ended"] = True
        last_answer = time.time()
    elif isinstance(event, h2.events.StreamReset):
        answers[event.stream_id]["reset"] = True
        last_answer = time.time()
    elif isinstance(event, h2.events.ConnectionTerminated):
        goaway = event.last_stream_id


# Frame by frame (hyperframe, h2's own parser), so that after the server's first GOAWAY, which closes h2's connection
# state, the frames of a graceful close still get their answer: the server's PING is acknowledged (it sends its last
# GOAWAY and closes on the ack), its last GOAWAY's stream id kept.
goaway, closed, last_answer, buffer = None, False, time.time(), b""
while not closed:
    try:
        data = sock.recv(65536)
    except (ConnectionResetError, ssl.SSLError):
        data = b""
    if not data:
        closed = True
        break
    buffer += data
    while len(buffer) >= 9:
        frame, length = hyperframe.frame.Frame.parse_frame_header(memoryview(buffer[:9]))
        if len(buffer) < 9 + length:
            break
        raw, buffer = buffer[:9 + length], buffer[9 + length:]
        if goaway is None:
            for event in connection.receive_data(raw):
                handle(event)
            pending = connection.data_to_send()
        else:
            # The streams the GOAWAY leaves open are still answered: their HEADERS (h2's HPACK decoder), their DATA
            # (flow control given back), their end.
            frame.parse_body(memoryview(raw[9:]))
            pending = b""
            if isinstance(frame, hyperframe.frame.PingFrame) and "ACK" not in frame.flags and not mute:
                pending = hyperframe.frame.PingFrame(0, opaque_data=frame.opaque_data, flags=["ACK"]).serialize()
            elif isinstance(frame, hyperframe.frame.GoAwayFrame):
                goaway = frame.last_stream_id
            elif isinstance(frame, hyperframe.frame.HeadersFrame) and frame.stream_id in answers:
                record_head(frame.stream_id, ((k.decode() if isinstance(k, bytes) else k, v.decode() if isinstance(v, bytes) else v)
                                              for k, v in connection.decoder.decode(frame.data)))
            elif isinstance(frame, hyperframe.frame.DataFrame) and frame.stream_id in answers:
                answers[frame.stream_id]["length"] += len(frame.data)
                if frame.flow_controlled_length:
                    pending = (hyperframe.frame.WindowUpdateFrame(0, window_increment=frame.flow_controlled_length).serialize()
                               + hyperframe.frame.WindowUpdateFrame(frame.stream_id, window_increment=frame.flow_controlled_length).serialize())
            if isinstance(frame, (hyperframe.frame.HeadersFrame, hyperframe.frame.DataFrame)) and "END_STREAM" in frame.flags \
                    and frame.stream_id in answers:
                answers[frame.stream_id]["ended"] = True
                last_answer = time.time()
        if pending:
            try:
                sock.sendall(pending)
            except OSError:
                closed = True
with open(out, "w") as file:
    json.dump({"answers": [answers[stream] for stream in sorted(answers)], "goaway": goaway, "closed": closed,
               "silence": round(time.time() - last_answer, 1),
               "indexed": sorted({(name.decode() if isinstance(name, bytes) else name)
                                  for name, _ in connection.decoder.header_table.dynamic_entries})}, file)
