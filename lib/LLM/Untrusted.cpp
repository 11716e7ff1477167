//===- Untrusted.cpp - files and text that someone else controls -------------===//

#include "evo/LLM/Untrusted.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

using llvm::StringRef;

namespace evo::llm {

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

std::string sanitizeForTerminal(StringRef text, bool keepLines) {
  std::string out;
  out.reserve(text.size());
  const auto *s = reinterpret_cast<const llvm::UTF8 *>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c < 0x80) {
      if ((c < 0x20 && !(keepLines && (c == '\n' || c == '\t'))) || c == 0x7f)
        out += llvm::formatv("\\x{0:x-2}", static_cast<unsigned>(c)).str();
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    unsigned len = llvm::getNumBytesForUTF8(c);
    if (i + len > n || !llvm::isLegalUTF8Sequence(s + i, s + i + len)) {
      out += llvm::formatv("\\x{0:x-2}", static_cast<unsigned>(c)).str();
      ++i;
      continue;
    }
    if (len == 2 && c == 0xC2 && s[i + 1] <= 0x9F) // C1: U+0080..U+009F
      out += llvm::formatv("\\u{0:x-4}", static_cast<unsigned>(s[i + 1])).str();
    else
      out.append(text.data() + i, len);
    i += len;
  }
  return out;
}

std::string sanitizeReplyText(StringRef text) {
  std::string lf;
  lf.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n'))
      lf += text[i];
  return sanitizeForTerminal(lf, /*keepLines=*/true);
}

bool isPlainFileName(StringRef name) {
  if (name.empty() || name.size() > 255 || name == "." || name == ".." ||
      name.contains('/') || name.contains('\0'))
    return false;
  return sanitizeForTerminal(name) == name;
}

namespace {
constexpr const char kRedacted[] = "[REDACTED]";

bool isTokenChar(char c) {
  return llvm::isAlnum(c) || StringRef("._~+/=-").contains(c);
}

/// Replaces the token that starts at `pos` (after optional spaces) in `s`; returns where to go on.
size_t redactTokenAt(std::string &s, size_t pos) {
  size_t start = pos;
  while (start < s.size() && (s[start] == ' ' || s[start] == '\t'))
    ++start;
  size_t end = start;
  while (end < s.size() && isTokenChar(s[end]))
    ++end;
  if (end == start || StringRef(s).substr(start, end - start) == kRedacted)
    return end;
  s.replace(start, end - start, kRedacted);
  return start + sizeof(kRedacted) - 1;
}

/// Redacts the value after each case-insensitive occurrence of `name` that starts a word: after
/// ':' or '=' (quotes and spaces allowed) for header-like names, after spaces for "Bearer".
void redactAfter(std::string &s, StringRef name, bool headerLike) {
  size_t from = 0;
  while (true) {
    size_t at = StringRef(s).find_insensitive(name, from);
    if (at == StringRef::npos)
      return;
    from = at + name.size();
    if (at > 0 && llvm::isAlnum(s[at - 1]))
      continue; // part of a longer word
    size_t p = from;
    auto skipQuotesAndSpaces = [&] {
      while (p < s.size() && (s[p] == '"' || s[p] == '\'' || s[p] == ' ' || s[p] == '\t'))
        ++p;
    };
    if (headerLike) {
      skipQuotesAndSpaces();
      if (p >= s.size() || (s[p] != ':' && s[p] != '='))
        continue;
      ++p;
      skipQuotesAndSpaces();
    } else if (p >= s.size() || (s[p] != ' ' && s[p] != '\t')) {
      continue;
    }
    from = redactTokenAt(s, p);
  }
}
} // namespace

std::string redactSecrets(StringRef text, llvm::ArrayRef<std::string> secrets) {
  std::string s = text.str();
  for (const std::string &secret : secrets) {
    if (secret.size() < 6)
      continue;
    for (size_t at = s.find(secret); at != std::string::npos; at = s.find(secret, at)) {
      s.replace(at, secret.size(), kRedacted);
      at += sizeof(kRedacted) - 1;
    }
  }
  redactAfter(s, "bearer", /*headerLike=*/false);
  redactAfter(s, "api-key", /*headerLike=*/true);
  redactAfter(s, "api_key", /*headerLike=*/true);
  return s;
}

std::vector<std::string> environmentSecrets(StringRef keyEnv) {
  std::set<std::string> found;
  for (char **e = environ; e && *e; ++e) {
    auto [name, value] = StringRef(*e).split('=');
    if (value.size() >= 6 && (name == keyEnv || name.ends_with("API_KEY") ||
                              name.ends_with("_TOKEN")))
      found.insert(value.str());
  }
  return {found.begin(), found.end()};
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

namespace {

llvm::Error fail(const std::string &msg) { return llvm::createStringError(msg); }

std::string quoted(StringRef display) { return "'" + sanitizeForTerminal(display) + "'"; }

StringRef kindName(mode_t m) {
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISDIR(m))
    return "a directory";
  if (S_ISSOCK(m))
    return "a socket";
  if (S_ISLNK(m))
    return "a symbolic link";
  return "not a regular file";
}

/// The regular file `name` relative to `dirfd` (see readRegularFileCapped).
llvm::Expected<std::string> readAt(int dirfd, const std::string &name, StringRef display,
                                   uint64_t cap, bool followSymlink, bool allowHardLinks) {
  int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (followSymlink ? 0 : O_NOFOLLOW);
  int fd;
  do
    fd = ::openat(dirfd, name.c_str(), flags);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP && !followSymlink)
      return fail(quoted(display) + " is a symbolic link: refused");
    if (err == ENXIO)
      return fail(quoted(display) + " is not a regular file: refused");
    return fail(quoted(display) + " cannot be read: " + std::strerror(err));
  }
  llvm::scope_exit closeFd([&] { ::close(fd); });
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return fail(quoted(display) + " cannot be read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(quoted(display) + " is " + kindName(st.st_mode).str() +
                ", not a regular file: refused");
  if (!followSymlink && !allowHardLinks && st.st_nlink > 1)
    return fail(llvm::formatv("{0} has {1} hard links (a file from elsewhere?): refused",
                              quoted(display), static_cast<uint64_t>(st.st_nlink))
                    .str());
  if (static_cast<uint64_t>(st.st_size) > cap)
    return fail(llvm::formatv("{0} is {1} bytes, over the limit of {2}: rejected",
                              quoted(display), static_cast<uint64_t>(st.st_size), cap)
                    .str());
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char chunk[1 << 16];
  while (out.size() <= cap) {
    size_t want = std::min<uint64_t>(sizeof(chunk), cap + 1 - out.size());
    ssize_t got = ::read(fd, chunk, want);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return fail(quoted(display) + " cannot be read: " + std::strerror(errno));
    if (got == 0)
      break;
    out.append(chunk, static_cast<size_t>(got));
  }
  if (out.size() > cap)
    return fail(llvm::formatv("{0} grew past the limit of {1} bytes while read: rejected",
                              quoted(display), cap)
                    .str());
  return out;
}

} // namespace

std::optional<llvm::json::Object> parseJsonObject(llvm::Expected<std::string> text) {
  if (!text) {
    llvm::consumeError(text.takeError());
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(*text);
  if (!v) {
    llvm::consumeError(v.takeError());
    return std::nullopt;
  }
  if (llvm::json::Object *o = v->getAsObject())
    return std::move(*o);
  return std::nullopt;
}

llvm::Expected<std::string> readRegularFileCapped(StringRef path, uint64_t cap,
                                                  bool followSymlink) {
  return readAt(AT_FDCWD, path.str(), path, cap, followSymlink, /*allowHardLinks=*/false);
}

llvm::Expected<SafeDir> SafeDir::open(StringRef path, bool create) {
  if (create)
    if (std::error_code ec = llvm::sys::fs::create_directories(path))
      return fail("cannot create " + quoted(path) + ": " + ec.message());
  int fd = ::open(path.str().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fail(quoted(path) + (errno == ENOTDIR ? std::string(" is not a directory")
                                                 : std::string(": ") + std::strerror(errno)));
  return SafeDir(fd, path.str());
}

llvm::Expected<SafeDir> SafeDir::sub(StringRef name, bool create) const {
  std::string where = path() + "/" + name.str();
  if (!isPlainFileName(name))
    return fail(quoted(where) + ": not a plain directory name");
  if (create && ::mkdirat(fd, name.str().c_str(), 0755) != 0 && errno != EEXIST)
    return fail("cannot create " + quoted(where) + ": " + std::strerror(errno));
  struct stat st;
  if (::fstatat(fd, name.str().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return fail(quoted(where) + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return fail(quoted(where) + " is " + kindName(st.st_mode).str() +
                ", not a directory: refused");
  int sub = ::openat(fd, name.str().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) // replaced since the check
    return fail(quoted(where) + " is not a real directory: refused (" + std::strerror(errno) +
                ")");
  return SafeDir(sub, std::move(where));
}

SafeDir::SafeDir(SafeDir &&other) noexcept : fd(other.fd), where(std::move(other.where)) {
  other.fd = -1;
}

SafeDir &SafeDir::operator=(SafeDir &&other) noexcept {
  if (this != &other) {
    if (fd >= 0)
      ::close(fd);
    fd = other.fd;
    where = std::move(other.where);
    other.fd = -1;
  }
  return *this;
}

SafeDir::~SafeDir() {
  if (fd >= 0)
    ::close(fd);
}

SafeDir::Kind SafeDir::kind(StringRef name) const {
  struct stat st;
  if (!isPlainFileName(name) ||
      ::fstatat(fd, name.str().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return Kind::Missing;
  if (S_ISREG(st.st_mode))
    return Kind::Regular;
  if (S_ISDIR(st.st_mode))
    return Kind::Directory;
  if (S_ISLNK(st.st_mode))
    return Kind::Symlink;
  return Kind::Other;
}

std::string SafeDir::display(StringRef name) const {
  return sanitizeForTerminal(path() + "/" + name.str());
}

llvm::Expected<std::string> SafeDir::read(StringRef name, uint64_t cap,
                                          bool allowHardLinks) const {
  if (!isPlainFileName(name))
    return fail(quoted(path() + "/" + name.str()) + ": not a plain file name: refused");
  return readAt(fd, name.str(), path() + "/" + name.str(), cap, /*followSymlink=*/false,
                allowHardLinks);
}

llvm::Error SafeDir::writeAtomically(StringRef name, StringRef text) const {
  if (!isPlainFileName(name) || name.size() > 200)
    return fail(quoted(path() + "/" + name.str()) + ": not a plain file name: refused");
  std::string tmp;
  int out = -1;
  for (int attempt = 0; attempt < 64 && out < 0; ++attempt) {
    tmp = llvm::formatv(".{0}.tmp-{1:x-8}", name, llvm::sys::Process::GetRandomNumber()).str();
    out = ::openat(fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0 && errno != EEXIST)
      break;
  }
  if (out < 0)
    return fail("cannot write " + quoted(display(name)) + ": " + std::strerror(errno));
  bool ok = true;
  int err = 0;
  for (size_t done = 0; ok && done < text.size();) {
    ssize_t n = ::write(out, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ok = false;
      err = n < 0 ? errno : EIO;
    } else {
      done += static_cast<size_t>(n);
    }
  }
  if (::close(out) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::renameat(fd, tmp.c_str(), fd, name.str().c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlinkat(fd, tmp.c_str(), 0);
    return fail("cannot write " + quoted(display(name)) + ": " + std::strerror(err));
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::string>> SafeDir::list() const {
  int d = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dp = d >= 0 ? ::fdopendir(d) : nullptr;
  if (!dp) {
    int err = errno;
    if (d >= 0)
      ::close(d);
    return fail("cannot list " + quoted(path()) + ": " + std::strerror(err));
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent *e = ::readdir(dp)) {
    StringRef n(e->d_name);
    if (n != "." && n != "..")
      names.push_back(n.str());
  }
  int err = errno;
  ::closedir(dp);
  if (err)
    return fail("cannot list " + quoted(path()) + ": " + std::strerror(err));
  return names;
}

} // namespace evo::llm
