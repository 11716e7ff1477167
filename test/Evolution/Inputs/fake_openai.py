"""A local OpenAI-compatible chat-completions server for tests (127.0.0.1, a free port).

Answers POST /v1/chat/completions with the reply of the scripted LLM (SCRIPTED, run on the
request's messages) and reports a fixed usage, so a test can check that the tokens a server
reports are the ones the run store records. Used from Python: `with FakeOpenAI(scripted) as s:`
gives `s.base_url` and `s.requests` (count).
"""
import http.server
import json
import subprocess
import threading

PROMPT_TOKENS, COMPLETION_TOKENS = 1111, 222


class FakeOpenAI:
    def __init__(self, scripted):
        owner = self
        self.requests = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests += 1
                msgs = body.get("messages", [])
                text = "\n\n".join(m.get("content", "") for m in msgs)
                reply = subprocess.run([scripted], input=text, capture_output=True, text=True).stdout
                out = json.dumps({"id": "fake", "object": "chat.completion", "model": body.get("model"),
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": reply}}],
                                  "usage": {"prompt_tokens": PROMPT_TOKENS,
                                            "completion_tokens": COMPLETION_TOKENS}}).encode()
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
