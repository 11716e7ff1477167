//===- Untrusted.h - files and text that someone else controls ------*- C++ -*-===//
//
// A mailbox is a directory other people (a relay on another host, a batch job, a person) write
// into; an LLM server's replies, error messages and usage reports are text its operator chose; a
// response cache or a prompt directory may come from another run. Everything read from there is
// treated as hostile (docs/reliability.md, "LLM servers and mailboxes"):
//
//  * files are opened without following a symbolic link (O_NOFOLLOW) and without blocking
//    (O_NONBLOCK: a FIFO cannot hang the open), then must be regular files with one link and at
//    most a given size, and at most that many bytes are read (a file growing meanwhile is
//    refused);
//  * directories inside a location are opened relative to it (openat) and must be real
//    directories, so a symlinked `replies/` cannot move reads or writes elsewhere, and a path
//    component swapped after the check changes nothing;
//  * names taken from a directory listing are used only when they are plain file names;
//  * files are written atomically (a fresh temporary file, then rename), which replaces a symlink
//    at the destination instead of writing through it;
//  * text printed or stored loses terminal control characters and any API key it echoes.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LLM_UNTRUSTED_H
#define EVO_LLM_UNTRUSTED_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <cstdint>
#include <string>
#include <vector>

namespace evo::llm {

/// Limits on what is read from mailboxes, caches, prompt directories and servers.
constexpr uint64_t kMaxJsonFileBytes = 32ull << 20;  // sidecars, cache entries
constexpr uint64_t kMaxPromptFileBytes = 16ull << 20; // prompts read by the relay, templates
constexpr uint64_t kDefaultMaxReplyBodyBytes = 8ull << 20; // an HTTP reply body

/// A plain file name: not empty, at most 255 bytes, not "." or "..", no '/', valid UTF-8 and no
/// control character (C0, DEL, C1).
bool isPlainFileName(llvm::StringRef name);

/// The text with terminal control characters made visible: C0 controls (ESC included, and \n and
/// \t too unless `keepLines`), DEL and C1 controls become `\xNN` / `\u00NN`, bytes that are not
/// UTF-8 become `\xNN`; everything else is kept.
std::string sanitizeForTerminal(llvm::StringRef text, bool keepLines = false);

/// What an LLM's reply text is stored and parsed as: "\r\n" becomes "\n", then
/// sanitizeForTerminal(text, /*keepLines=*/true).
std::string sanitizeReplyText(llvm::StringRef text);

/// The text with every occurrence of each secret (6 characters or longer) replaced by
/// "[REDACTED]", and the value after any "Bearer ", "x-api-key:"/"x-api-key=" or
/// "api_key:"/"api-key=" (quotes allowed, case-insensitive) as well.
std::string redactSecrets(llvm::StringRef text, llvm::ArrayRef<std::string> secrets);

/// Secrets of this process that text must never echo: the value of `keyEnv` (when set) and of
/// every environment variable whose name ends in API_KEY or _TOKEN.
std::vector<std::string> environmentSecrets(llvm::StringRef keyEnv);

/// Reads the regular file `path` (the last component must not be a symbolic link unless
/// `followSymlink`): at most `cap` bytes; a larger, growing, special (FIFO, device, socket,
/// directory) or (unless `followSymlink`) multiply-linked file is refused with a message naming
/// it. Never blocks on a FIFO, never reads more than cap + 1 bytes.
llvm::Expected<std::string> readRegularFileCapped(llvm::StringRef path, uint64_t cap,
                                                  bool followSymlink = false);

/// The JSON object in `text` (a file read with the functions here), or nullopt when the text
/// could not be read, is not JSON or is not an object: untrusted files that fail are ignored.
std::optional<llvm::json::Object> parseJsonObject(llvm::Expected<std::string> text);

/// A directory held open by descriptor. Every name given to it must be a plain file name
/// (isPlainFileName) and is resolved inside it without following symbolic links.
class SafeDir {
public:
  enum class Kind { Missing, Regular, Directory, Symlink, Other };

  /// Opens `path` (created with its parents when `create`). The path is the user's choice, so a
  /// symbolic link in it is followed.
  static llvm::Expected<SafeDir> open(llvm::StringRef path, bool create);
  /// Opens the subdirectory `name`, which must be a real directory (not a symbolic link to one);
  /// created when missing and `create`.
  llvm::Expected<SafeDir> sub(llvm::StringRef name, bool create) const;

  SafeDir(SafeDir &&other) noexcept;
  SafeDir &operator=(SafeDir &&other) noexcept;
  SafeDir(const SafeDir &) = delete;
  SafeDir &operator=(const SafeDir &) = delete;
  ~SafeDir();

  /// What `name` is, without following a symbolic link (Missing also for an unusable name).
  Kind kind(llvm::StringRef name) const;
  /// readRegularFileCapped for `name` inside this directory (never through a symbolic link).
  /// With `allowHardLinks`, a file with several links is read too (the response cache: a run
  /// directory copied with `cp -al` stays replayable; its entries are only used when their key
  /// matches).
  llvm::Expected<std::string> read(llvm::StringRef name, uint64_t cap,
                                   bool allowHardLinks = false) const;
  /// Writes `name` atomically: a new temporary file in this directory (O_EXCL), then rename. A
  /// symbolic link at `name` is replaced, never written through; on failure nothing is left.
  llvm::Error writeAtomically(llvm::StringRef name, llvm::StringRef text) const;
  /// The names in the directory, as they are (check them with isPlainFileName before use).
  llvm::Expected<std::vector<std::string>> list() const;

  /// The directory's path, as opened (for messages).
  const std::string &path() const { return where; }
  /// `path()/name` made safe to print.
  std::string display(llvm::StringRef name) const;

private:
  SafeDir(int fd, std::string where) : fd(fd), where(std::move(where)) {}
  int fd = -1;
  std::string where;
};

} // namespace evo::llm

#endif
