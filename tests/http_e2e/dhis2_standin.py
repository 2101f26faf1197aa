"""A stand-in for DHIS2 behind nginx (tests/http_e2e/nginx_proxy_test.sh): answers every request
with a JSON description of what reached it ({"standIn": "dhis2", "method", "path", "body",
"authorization"}) and the header X-Stand-In: dhis2, so that a test sees which upstream nginx
chose; GET /api/old-export?QUERY answers 302 to /api/dataValueSets.json?QUERY (a relative
Location, as DHIS2 and proxies send). Listens on 127.0.0.1, a free port, written to --port-file.
"""

import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class StandIn(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as nginx's upstream keepalive expects

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        if self.command == "GET" and url.path == "/api/old-export":
            self.send_response(302)
            self.send_header("Location", "/api/dataValueSets.json?" + url.query)
            self.send_header("X-Stand-In", "dhis2")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        text = json.dumps({
            "standIn": "dhis2",
            "method": self.command,
            "path": self.path,
            "body": body.decode("utf-8", "replace"),
            "authorization": self.headers.get("Authorization"),
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("X-Stand-In", "dhis2")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(text)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    server.daemon_threads = True
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
