#!/usr/bin/env python3
"""The demo's notification receiver and pre-start check: a small HTTP
server on 127.0.0.1.

    receiver.py DIR PORT CHECK_DIR

A POST to /check is a pre-start check's question (the CloudEvent
pre-start): the first is answered 503 with a change board's refusal, every
later one 200; each body is kept as CHECK_DIR/N.json with the answer and the real
instant it was given (epoch seconds) under "demoCheckAnswer". Every other POST is a notification, answered 200 and
kept as DIR/N.json. N counts from 0 in each directory; files are written
whole (N.tmp, then renamed). Each body is printed on stdout as one line (a
check's with "demoCheckAnswer"), flushed at once, for the demo to format.
Nothing else is printed; the standard library only.
"""
import http.server
import json
import os
import sys
import time

directory, port, check_directory = sys.argv[1], int(sys.argv[2]), sys.argv[3]
counts = {directory: 0, check_directory: 0}
REFUSAL = "CAB-1042: the change record for this change is not approved yet\n"


def keep(where, body):
    n = counts[where]
    counts[where] += 1
    tmp = os.path.join(where, "%d.tmp" % n)
    with open(tmp, "wb") as f:
        f.write(body)
    os.rename(tmp, os.path.join(where, "%d.json" % n))


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        answer, text = 200, b""
        if self.path.split("?")[0] == "/check":
            if counts[check_directory] == 0:
                answer, text = 503, REFUSAL.encode()
            try:
                event = json.loads(body)
            except ValueError:
                event = {}
            event["demoCheckAnswer"] = {"status": answer, "message": text.decode().strip(),
                                        "at": time.time()}
            body = json.dumps(event).encode()
            keep(check_directory, body)
        else:
            keep(directory, body)
        self.send_response(answer)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)
        sys.stdout.write(body.decode("utf-8", "replace").replace("\n", " ") + "\n")
        sys.stdout.flush()

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
