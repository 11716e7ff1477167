//===- Http.cpp - HTTP POST through libcurl, loaded at run time ---------------===//

#include "Http.h"
#include <curl/curl.h>
#include <dlfcn.h>
#include <mutex>

namespace evo::llm {

namespace {
struct CurlApi {
  CURLcode (*globalInit)(long) = nullptr;
  CURL *(*easyInit)() = nullptr;
  CURLcode (*easySetopt)(CURL *, CURLoption, ...) = nullptr;
  CURLcode (*easyPerform)(CURL *) = nullptr;
  CURLcode (*easyGetinfo)(CURL *, CURLINFO, ...) = nullptr;
  void (*easyCleanup)(CURL *) = nullptr;
  const char *(*easyStrerror)(CURLcode) = nullptr;
  curl_slist *(*slistAppend)(curl_slist *, const char *) = nullptr;
  void (*slistFreeAll)(curl_slist *) = nullptr;
  std::string error;
};

const CurlApi &api() {
  static CurlApi a;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = nullptr;
    for (const char *name : {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!lib) {
      a.error = "libcurl cannot be loaded (" + std::string(dlerror()) +
                "); the HTTP backends need it (Debian: apt install libcurl4)";
      return;
    }
    auto bind = [&](auto &fn, const char *sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, sym));
      if (!fn && a.error.empty())
        a.error = std::string("libcurl lacks ") + sym;
    };
    bind(a.globalInit, "curl_global_init");
    bind(a.easyInit, "curl_easy_init");
    bind(a.easySetopt, "curl_easy_setopt");
    bind(a.easyPerform, "curl_easy_perform");
    bind(a.easyGetinfo, "curl_easy_getinfo");
    bind(a.easyCleanup, "curl_easy_cleanup");
    bind(a.easyStrerror, "curl_easy_strerror");
    bind(a.slistAppend, "curl_slist_append");
    bind(a.slistFreeAll, "curl_slist_free_all");
    if (a.error.empty() && a.globalInit(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      a.error = "curl_global_init failed";
  });
  return a;
}

struct BodySink {
  std::string *body;
  uint64_t cap;
  bool over = false;
};

size_t onBody(char *data, size_t size, size_t n, void *user) {
  auto *sink = static_cast<BodySink *>(user);
  if (sink->body->size() + size * n > sink->cap) {
    sink->over = true;
    return 0; // anything but size * n aborts the transfer (CURLE_WRITE_ERROR)
  }
  sink->body->append(data, size * n);
  return size * n;
}

size_t onHeader(char *data, size_t size, size_t n, void *user) {
  std::string line(data, size * n);
  static const char name[] = "retry-after:";
  if (line.size() > sizeof(name) - 1) {
    bool match = true;
    for (size_t i = 0; i + 1 < sizeof(name) && match; ++i)
      match = std::tolower(static_cast<unsigned char>(line[i])) == name[i];
    if (match) {
      std::string v = line.substr(sizeof(name) - 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
        v.erase(v.begin());
      while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' '))
        v.pop_back();
      *static_cast<std::string *>(user) = v;
    }
  }
  return size * n;
}
} // namespace

bool httpAvailable(std::string *why) {
  const CurlApi &a = api();
  if (why)
    *why = a.error;
  return a.error.empty();
}

HttpResponse httpPost(const std::string &url, const std::vector<std::string> &headers,
                      const std::string &body, double timeoutSeconds, uint64_t maxBodyBytes) {
  HttpResponse r;
  const CurlApi &a = api();
  if (!a.error.empty()) {
    r.error = a.error;
    return r;
  }
  CURL *h = a.easyInit();
  if (!h) {
    r.error = "curl_easy_init failed";
    return r;
  }
  curl_slist *list = nullptr;
  for (const std::string &hdr : headers)
    list = a.slistAppend(list, hdr.c_str());
  long timeoutMs = static_cast<long>(timeoutSeconds * 1000);
  a.easySetopt(h, CURLOPT_URL, url.c_str());
  a.easySetopt(h, CURLOPT_POST, 1L);
  a.easySetopt(h, CURLOPT_POSTFIELDS, body.c_str());
  a.easySetopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  a.easySetopt(h, CURLOPT_HTTPHEADER, list);
  a.easySetopt(h, CURLOPT_TIMEOUT_MS, timeoutMs);
  a.easySetopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeoutMs, 30000L));
  a.easySetopt(h, CURLOPT_NOSIGNAL, 1L); // threads: no SIGALRM-based timeouts
  BodySink sink{&r.body, maxBodyBytes};
  // A Content-Length over the cap is refused before any body byte arrives; a body streamed
  // without one (or lying about it) is cut by the sink.
  a.easySetopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(maxBodyBytes));
  a.easySetopt(h, CURLOPT_WRITEFUNCTION, &onBody);
  a.easySetopt(h, CURLOPT_WRITEDATA, &sink);
  a.easySetopt(h, CURLOPT_HEADERFUNCTION, &onHeader);
  a.easySetopt(h, CURLOPT_HEADERDATA, &r.retryAfter);
  a.easySetopt(h, CURLOPT_USERAGENT, "evo-opt");
  CURLcode rc = a.easyPerform(h);
  long status = 0;
  a.easyGetinfo(h, CURLINFO_RESPONSE_CODE, &status);
  r.status = static_cast<int>(status);
  if (rc == CURLE_OK) {
    r.transportOk = true;
  } else if (sink.over || rc == CURLE_FILESIZE_EXCEEDED) {
    r.tooLarge = true;
    r.body.clear();
    r.body.shrink_to_fit();
    r.error = "the response body is over the limit of " + std::to_string(maxBodyBytes) +
              " bytes: transfer aborted";
  } else {
    r.timedOut = rc == CURLE_OPERATION_TIMEDOUT;
    r.error = a.easyStrerror(rc);
  }
  a.slistFreeAll(list);
  a.easyCleanup(h);
  return r;
}

} // namespace evo::llm
