"""A local OpenAI-compatible chat-completions server for tests (127.0.0.1, a free port).

Answers POST /v1/chat/completions with the reply of the scripted LLM (SCRIPTED, run on the
request's messages: real rewrites, subtly wrong kernels, unparseable code, refusals) and reports a
fixed usage, so a test can check that the tokens a server reports are the ones the run store
records. The first requests can be faults instead, in order: "429" (with Retry-After: 1), "500",
"malformed" (not JSON), "truncated" (the connection drops mid-body), "empty" (no content).
Used from Python: `with FakeOpenAI(scripted, faults) as s:` gives `s.base_url`, `s.requests`
(count) and `s.answered` (normal replies).
"""
import http.server
import json
import subprocess
import threading

PROMPT_TOKENS, COMPLETION_TOKENS = 1111, 222


class FakeOpenAI:
    def __init__(self, scripted, faults=()):
        owner = self
        self.requests = 0
        self.answered = 0
        self.authorization = set()  # the Authorization headers seen
        self.faults = list(faults)
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    owner.requests += 1
                    owner.authorization.add(self.headers.get("Authorization", ""))
                    fault = owner.faults.pop(0) if owner.faults else None
                if fault in ("429", "500"):
                    self.send_response(int(fault))
                    if fault == "429":
                        self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if fault == "malformed":
                    return self.send(b"{this is not json")
                if fault == "truncated":
                    out = b'{"choices": [{"message": {"content": "name: x'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out) + 200))
                    self.end_headers()
                    self.wfile.write(out)
                    self.wfile.flush()
                    self.close_connection = True
                    return
                msgs = body.get("messages", [])
                text = "\n\n".join(m.get("content", "") for m in msgs)
                reply = subprocess.run([scripted], input=text, capture_output=True, text=True).stdout
                if fault == "empty":
                    reply = ""
                else:
                    with owner.lock:
                        owner.answered += 1
                out = json.dumps({"id": "fake", "object": "chat.completion", "model": body.get("model"),
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": reply}}],
                                  "usage": {"prompt_tokens": PROMPT_TOKENS,
                                            "completion_tokens": COMPLETION_TOKENS}}).encode()
                self.send(out)

            def send(self, out):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
