"""A misbehaving OpenAI-compatible chat-completions server for the hostile-input suite.

Listens on 127.0.0.1 (a free port) only. Each request takes the next behaviour of the list given
(the last one repeats):

  ok            a prose reply ("no code here") with usage 1111 + 222
  usage-negative, usage-max
                a normal reply whose usage is -5000000 / -1, or int64 max twice
  echo-key-401  HTTP 401 whose error message repeats the Authorization header it got
  echo-key-200  a reply whose content and model name repeat the Authorization header
  ansi-500      HTTP 500 whose message holds ESC/CSI/OSC sequences and a C1 control
  ansi-400      the same with 400 (not retried)
  ansi-200      a reply whose content and model name hold them
  huge-claimed  Content-Length: 8 GiB, then zeros until the client hangs up
  endless       no Content-Length, zeros until the client hangs up

Streaming stops after 60 s at the latest, whatever the client does. `with HostileServer([...]) as
s:` gives `s.base_url`, `s.requests` (count) and `s.bodies` and `s.authorization` (the request bodies and Authorization headers received).
"""
import http.server
import json
import threading
import time

ANSI = "\x1b[31mRED\x1b[0m \x1b]0;pwned-title\x07 \x1b[2J \u009b6n"
INT64_MAX = 2**63 - 1


class HostileServer:
    def __init__(self, behaviours):
        owner = self
        self.behaviours = list(behaviours)
        self.requests = 0
        self.bodies = []
        self.authorization = []  # the Authorization headers received
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = min(int(self.headers.get("Content-Length", "0")), 64 << 20)
                body = self.rfile.read(length).decode("utf-8", "replace")
                with owner.lock:
                    owner.requests += 1
                    owner.bodies.append(body)
                    owner.authorization.append(self.headers.get("Authorization", ""))
                    mode = owner.behaviours.pop(0) if len(owner.behaviours) > 1 else owner.behaviours[0]
                auth = self.headers.get("Authorization", "")
                if mode in ("huge-claimed", "endless"):
                    return self.flood(mode == "huge-claimed")
                if mode == "echo-key-401":
                    return self.error(401, f"invalid key in 'Authorization: {auth}'")
                if mode in ("ansi-500", "ansi-400"):
                    return self.error(int(mode[-3:]), "overloaded " + ANSI)
                content, model, usage = "No code here, sorry.", "fake-model", (1111, 222)
                if mode == "usage-negative":
                    usage = (-5000000, -1)
                elif mode == "usage-max":
                    usage = (INT64_MAX, INT64_MAX)
                elif mode == "echo-key-200":
                    content = f"You sent {auth}; keep it secret.\nNo code here."
                    model = "model-for-" + auth
                elif mode == "ansi-200":
                    content = "No code here " + ANSI
                    model = "model" + ANSI
                out = json.dumps({"id": "x", "object": "chat.completion", "model": model,
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": content}}],
                                  "usage": {"prompt_tokens": usage[0],
                                            "completion_tokens": usage[1]}}).encode()
                self.send(200, out)

            def error(self, status, message):
                self.send(status, json.dumps({"error": {"message": message}}).encode())

            def send(self, status, out):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def flood(self, claim):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if claim:
                    self.send_header("Content-Length", str(8 << 30))
                self.send_header("Connection", "close")
                self.end_headers()
                chunk = b'{"choices": [' + b" " * (1 << 16)
                deadline = time.time() + 60
                try:
                    while time.time() < deadline:
                        self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
