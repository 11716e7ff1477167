//===- FakeLLMServer.h - a scripted OpenAI/Anthropic-compatible server --------===//
//
// Test support (CI has no network and no keys): serves POST /v1/chat/completions (also
// /chat/completions) and /v1/messages on 127.0.0.1 with scripted replies, one step per request
// in order (the last step repeats). A step is a JSON object:
//   {"content": "...", "usage": [prompt, completion]}   a normal reply
//   {"status": 429, "retry_after": "1"}                  an error status (optional Retry-After)
//   {"delay_ms": 3000, ...}                              answer late (a hang past the timeout)
//   {"raw": "{not json"}                                 this exact body
//   {"truncate": true, "content": "..."}                 half the body, then the connection drops
// Hostile steps (docs/reliability.md):
//   {"echo_auth": true, ...}           the Authorization / x-api-key headers appended to the
//                                      content (200) or to the error message (other statuses)
//   {"stream_bytes": N}                a chunked body of N bytes, no Content-Length
//   {"claim_length": N}                Content-Length: N, bytes sent until the client hangs up
// Every request is recorded (path, headers that matter, body).
//
//===----------------------------------------------------------------------===//

#ifndef EVO_UNITTESTS_FAKELLMSERVER_H
#define EVO_UNITTESTS_FAKELLMSERVER_H

#include "llvm/Support/JSON.h"
#include "llvm/Support/FormatVariadic.h"
#include <httplib.h>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace evo::test {

class FakeLLMServer {
public:
  struct Seen {
    std::string path, authorization, apiKey, body;
  };

  explicit FakeLLMServer(llvm::json::Array script) : steps(std::move(script)) {
    auto handler = [this](const httplib::Request &req, httplib::Response &res) { serve(req, res); };
    server.Post("/v1/chat/completions", handler);
    server.Post("/chat/completions", handler);
    server.Post("/v1/messages", handler);
    portNumber = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeLLMServer() {
    server.stop();
    thread.join();
  }

  int port() const { return portNumber; }
  std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(portNumber); }
  std::vector<Seen> requests() {
    std::lock_guard<std::mutex> lock(mutex);
    return seen;
  }
  size_t numRequests() {
    std::lock_guard<std::mutex> lock(mutex);
    return seen.size();
  }

private:
  void serve(const httplib::Request &req, httplib::Response &res) {
    llvm::json::Object step;
    {
      std::lock_guard<std::mutex> lock(mutex);
      seen.push_back({req.path, req.get_header_value("Authorization"),
                      req.get_header_value("x-api-key"), req.body});
      if (!steps.empty()) {
        size_t i = std::min(next++, steps.size() - 1);
        if (const llvm::json::Object *o = steps[i].getAsObject())
          step = *o;
      }
    }
    if (std::optional<int64_t> d = step.getInteger("delay_ms"))
      std::this_thread::sleep_for(std::chrono::milliseconds(*d));
    int status = static_cast<int>(step.getInteger("status").value_or(200));
    res.status = status;
    if (std::optional<llvm::StringRef> ra = step.getString("retry_after"))
      res.set_header("Retry-After", ra->str());
    if (std::optional<llvm::StringRef> raw = step.getString("raw")) {
      res.set_content(raw->str(), "application/json");
      return;
    }
    std::string echoed;
    if (step.getBoolean("echo_auth").value_or(false))
      echoed = " (you sent Authorization: " + req.get_header_value("Authorization") +
               ", x-api-key: " + req.get_header_value("x-api-key") + ")";
    if (std::optional<int64_t> n = step.getInteger("stream_bytes")) {
      uint64_t total = static_cast<uint64_t>(*n);
      res.set_chunked_content_provider(
          "application/json", [total](size_t offset, httplib::DataSink &sink) {
            static const std::string chunk(1 << 16, 'x');
            if (offset >= total) {
              sink.done();
              return true;
            }
            return sink.write(chunk.data(), std::min<uint64_t>(chunk.size(), total - offset));
          });
      return;
    }
    if (std::optional<int64_t> n = step.getInteger("claim_length")) {
      res.set_content_provider(static_cast<size_t>(*n), "application/json",
                               [](size_t, size_t length, httplib::DataSink &sink) {
                                 static const std::string chunk(1 << 16, 'x');
                                 return sink.write(chunk.data(),
                                                   std::min<size_t>(chunk.size(), length));
                               });
      return;
    }
    if (status != 200) {
      llvm::json::Object err{{"error", llvm::json::Object{{"message", "scripted status " +
                                                                          std::to_string(status) +
                                                                          echoed}}}};
      res.set_content(llvm::formatv("{0}", llvm::json::Value(std::move(err))).str(),
                      "application/json");
      return;
    }
    std::string content = step.getString("content").value_or("").str() + echoed;
    int64_t p = 0, c = 0;
    if (const llvm::json::Array *u = step.getArray("usage"); u && u->size() == 2) {
      // Any int64, negative ones too (a hostile server).
      p = (*u)[0].getAsInteger().value_or(0);
      c = (*u)[1].getAsInteger().value_or(0);
    }
    llvm::json::Object body;
    if (req.path == "/v1/messages")
      body = llvm::json::Object{
          {"model", "claude-test"},
          {"content", llvm::json::Array{llvm::json::Object{{"type", "text"}, {"text", content}}}},
          {"usage", llvm::json::Object{{"input_tokens", p}, {"output_tokens", c}}}};
    else
      body = llvm::json::Object{
          {"model", "gpt-test"},
          {"choices", llvm::json::Array{llvm::json::Object{
                          {"index", 0},
                          {"message", llvm::json::Object{{"role", "assistant"},
                                                         {"content", content}}}}}},
          {"usage", llvm::json::Object{{"prompt_tokens", p}, {"completion_tokens", c}}}};
    std::string text = llvm::formatv("{0}", llvm::json::Value(std::move(body))).str();
    if (step.getBoolean("truncate").value_or(false)) {
      // Announce the whole length, send half, then drop the connection.
      size_t half = text.size() / 2;
      res.set_content_provider(text.size(), "application/json",
                               [text, half](size_t offset, size_t, httplib::DataSink &sink) {
                                 if (offset < half)
                                   sink.write(text.data() + offset, half - offset);
                                 return offset < half;
                               });
      return;
    }
    res.set_content(text, "application/json");
  }

  httplib::Server server;
  std::thread thread;
  int portNumber = 0;
  std::mutex mutex;
  llvm::json::Array steps;
  size_t next = 0;
  std::vector<Seen> seen;
};

} // namespace evo::test

#endif
