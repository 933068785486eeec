#!/usr/bin/python3
"""A tiny web app for the app proxy's tests: it answers GET with the path
and cookies it was sent, and echoes text on a websocket at .../ws. Every
request is logged to stdout, so a test can tell that nothing reached it."""
import base64, hashlib, http.server, os, struct, sys

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class App(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        print("request", self.path, flush=True)
        if self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket()
        body = ("app %s job %s cookie=%s\n" % (self.path, os.environ.get("CORRAL_JOB_ID"),
                                                self.headers.get("Cookie", ""))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", "corral_session=stolen; Path=/")
        self.send_header("Set-Cookie", "app=1; Path=/")
        self.end_headers()
        self.wfile.write(body)

    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"].encode()
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            op, n = head[0] & 0x0F, head[1] & 0x7F
            if n == 126:
                n = struct.unpack(">H", self.rfile.read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4)
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
            if op == 8:  # close: answer it and end
                self.wfile.write(bytes([0x88, len(data)]) + data)
                self.wfile.flush()
                return
            if op == 1:
                out = b"echo: " + data
                self.wfile.write(bytes([0x81, len(out)]) + out)  # the tests' messages are short
                self.wfile.flush()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), App).serve_forever()
