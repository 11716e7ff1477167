//===- Http.h - HTTP POST through libcurl, loaded at run time ------*- C++ -*-===//
//
// Private to the LLM library. libcurl is loaded with dlopen on first use, so evo-opt (and its
// static build for GPU hosts) runs without it; only the HTTP backends need it.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_LLM_HTTP_H
#define EVO_LIB_LLM_HTTP_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace evo::llm {

struct HttpResponse {
  bool transportOk = false;  // a complete response arrived
  bool timedOut = false;
  bool tooLarge = false;     // the body passed the cap: the transfer was aborted
  int status = 0;
  std::string body;
  std::string retryAfter;    // the Retry-After header, if any
  std::string error;         // transport error text
};

/// POSTs `body` (JSON) to `url` with `headers` ("Name: value"); never throws. A response body
/// over `maxBodyBytes` (announced or streamed) aborts the transfer (tooLarge): at most that many
/// bytes are ever held.
HttpResponse httpPost(const std::string &url, const std::vector<std::string> &headers,
                      const std::string &body, double timeoutSeconds, uint64_t maxBodyBytes);

/// Whether libcurl could be loaded; `why` says why not.
bool httpAvailable(std::string *why);

} // namespace evo::llm

#endif
