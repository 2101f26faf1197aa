"""HTTP/1.1 on a plain socket, for the tests of tests/http_e2e: what a library client would hide
(whether a chunked body ended with its last chunk, whether a connection stayed open, bytes that
are not valid HTTP) stays visible here."""

import json
import socket
import time


class Response:
    def __init__(self, status, reason, headers, body, complete):
        self.status = status  # int
        self.reason = reason
        self.headers = headers  # [(name, value)] in order, names as sent
        self.body = body  # bytes, chunked encoding removed
        self.complete = complete  # False: the connection ended before the body did

    def header(self, name):
        """The first value of header "name" (any case), or None."""
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def header_names(self):
        return [key.lower() for key, _ in self.headers]

    def __repr__(self):
        return f"<{self.status} {self.reason} {self.headers} {self.body[:200]!r}>"


class Connection:
    """One TCP connection; requests are sent whole, responses read one at a time."""

    def __init__(self, host, port, timeout=30.0, source=None, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            # Before connect, so that the window the client announces stays small.
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if source:
            self.sock.bind((source, 0))
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        self.buffer = b""

    def send(self, data):
        self.sock.sendall(data)

    def request(self, target, headers=(), method="GET", host="127.0.0.1"):
        lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
        lines += [f"{name}: {value}" for name, value in headers]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the connection ended")
        self.buffer += data

    def _line(self):
        while b"\r\n" not in self.buffer:
            self._fill()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def _exactly(self, n):
        while len(self.buffer) < n:
            self._fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def read_response(self, method="GET", on_body=None):
        """Reads one response. on_body(bytes) is called for each piece of the body as it
        arrives (for timing); the body is collected all the same."""
        status_line = self._line().decode("latin-1")
        version, status, reason = (status_line.split(" ", 2) + [""])[:3]
        if not version.startswith("HTTP/1."):
            raise ValueError(f"not an HTTP/1.x status line: {status_line!r}")
        headers = []
        while True:
            line = self._line()
            if not line:
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers.append((name, value.strip()))
        response = Response(int(status), reason, headers, b"", True)
        status = int(status)
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return response
        body = []

        def take(data):
            body.append(data)
            if on_body:
                on_body(data)

        try:
            if (response.header("Transfer-Encoding") or "").lower() == "chunked":
                while True:
                    size = int(self._line().split(b";")[0], 16)
                    if size == 0:
                        while self._line():  # trailers, then the empty line
                            pass
                        break
                    while size > 0:
                        if not self.buffer:
                            self._fill()
                        piece = self.buffer[:size]
                        self.buffer = self.buffer[len(piece):]
                        size -= len(piece)
                        take(piece)
                    if self._exactly(2) != b"\r\n":
                        raise ValueError("a chunk does not end with CRLF")
            elif response.header("Content-Length") is not None:
                left = int(response.header("Content-Length"))
                while left > 0:
                    if not self.buffer:
                        self._fill()
                    piece = self.buffer[:left]
                    self.buffer = self.buffer[len(piece):]
                    left -= len(piece)
                    take(piece)
            else:  # until the connection ends
                while True:
                    if self.buffer:
                        take(self.buffer)
                        self.buffer = b""
                    try:
                        self._fill()
                    except EOFError:
                        break
        except (EOFError, ConnectionResetError):
            response.complete = False
        response.body = b"".join(body)
        return response

    def closed_by_peer(self, within):
        """Whether the peer ends the connection (EOF or reset) within "within" seconds; what it
        sends meanwhile is kept in self.buffer."""
        deadline = time.monotonic() + within
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return False
            except (ConnectionResetError, BrokenPipeError):
                return True
            if not data:
                return True
            self.buffer += data

    def close(self):
        self.sock.close()


def get(host, port, target, headers=(), method="GET", timeout=30.0, source=None):
    """One request on a new connection, which is then closed."""
    connection = Connection(host, port, timeout=timeout, source=source)
    try:
        connection.request(target, headers, method=method)
        return connection.read_response(method=method)
    finally:
        connection.close()


# What the test scripts share besides HTTP.

def check(condition, message):
    if not condition:
        raise AssertionError(message)


def export_lines(log):
    """The "export" lines of a dvexport-server log, parsed, in order."""
    lines = []
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "export":
                lines.append(event)
    return lines


def next_export_line(log, seen, within=10.0):
    """The first export line of "log" after the first "seen" ones, waiting for it."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        lines = export_lines(log)
        if len(lines) > seen:
            return lines[seen]
        time.sleep(0.05)
    raise AssertionError(f"{log}: no export line after the {seen} seen")
