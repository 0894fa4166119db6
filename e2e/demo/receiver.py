#!/usr/bin/env python3
"""The demo's notification receiver: a small HTTP server on 127.0.0.1.

    receiver.py DIR PORT

Answers every POST with 200, keeps each body as DIR/N.json (N counts from
0, written whole: DIR/N.tmp then renamed) and prints it on stdout as one
line (the body, with newlines replaced by spaces), flushed at once, for the
demo to format. Nothing else is printed; the standard library only.
"""
import http.server
import os
import sys

directory, port = sys.argv[1], int(sys.argv[2])
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        n = count
        count += 1
        tmp = os.path.join(directory, "%d.tmp" % n)
        with open(tmp, "wb") as f:
            f.write(body)
        os.rename(tmp, os.path.join(directory, "%d.json" % n))
        self.send_response(200)
        self.end_headers()
        sys.stdout.write(body.decode("utf-8", "replace").replace("\n", " ") + "\n")
        sys.stdout.flush()

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
