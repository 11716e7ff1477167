//===- ChipRules.h - which kernel image runs on which GPU, once ----*- C++ -*-===//
//
// A chip is named as NVPTX and ptxas name it: sm_<major><minor>[a|f] (sm_80, sm_90a, sm_100f,
// sm_121). PTX and cubins are not interchangeable across chips, and the CUDA rules for which
// image runs where are spelled here once:
//
// * a cubin for sm_XY runs on GPUs of compute capability X.Z with Z >= Y (same major); an
//   `f` (family) cubin likewise; an `a` (arch-specific: wgmma, setmaxnreg, ...) cubin only on X.Y;
// * PTX for .target sm_XY is JIT-compiled by the driver for any GPU of compute capability >= X.Y;
//   PTX for sm_XYf only within its family (same major, minor >= Y); PTX for sm_XYa only on X.Y;
// * ptxas assembles PTX for sm_XY into a cubin for any chip >= sm_XY, PTX for sm_XYf for the
//   chips of its family at or above it, PTX for sm_XYa only for sm_XYa (`ptxas --help`).
//
// evo-emit-ptx (`chips=`), evo-evolve (the GPU it runs on against its `chip`) and
// libevo_runtime (choosing a manifest's binary for a device) include this header:
// header-only and dependency-free (plain C++17). python/evo_runtime/manifest.py repeats it, and
// runtime/unittests/chip-selection.json holds cases both loaders' tests run.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_CHIPRULES_H
#define EVO_RUNTIME_CHIPRULES_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evo::chips {

struct Chip {
  int major = 0, minor = 0; ///< sm_90a: 9, 0; sm_121: 12, 1
  char suffix = 0;          ///< 0, 'a' (arch-specific) or 'f' (family)

  int number() const { return major * 10 + minor; }
  std::string name() const {
    std::string s = "sm_" + std::to_string(number());
    if (suffix)
      s += suffix;
    return s;
  }
  bool operator==(const Chip &o) const {
    return major == o.major && minor == o.minor && suffix == o.suffix;
  }
};

/// sm_<2 or 3 digits>[a|f], the last digit being the minor version; nullopt otherwise.
inline std::optional<Chip> parse(std::string_view s) {
  if (s.size() < 5 || s.substr(0, 3) != "sm_")
    return std::nullopt;
  s.remove_prefix(3);
  Chip c;
  if (s.back() == 'a' || s.back() == 'f') {
    c.suffix = s.back();
    s.remove_suffix(1);
  }
  if (s.size() < 2 || s.size() > 3 || s[0] == '0')
    return std::nullopt;
  int n = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9')
      return std::nullopt;
    n = n * 10 + (ch - '0');
  }
  c.major = n / 10;
  c.minor = n % 10;
  return c;
}

/// "sm_90" for compute capability 9.0.
inline std::string deviceName(int major, int minor) {
  return "sm_" + std::to_string(major * 10 + minor);
}

/// A cubin assembled for `c` runs on a GPU of compute capability major.minor.
inline bool cubinRunsOn(const Chip &c, int major, int minor) {
  if (c.suffix == 'a')
    return c.major == major && c.minor == minor;
  return c.major == major && c.minor <= minor;
}

/// The driver can JIT-compile PTX for .target `c` for a GPU of compute capability major.minor.
inline bool ptxRunsOn(const Chip &c, int major, int minor) {
  if (c.suffix == 'a')
    return c.major == major && c.minor == minor;
  if (c.suffix == 'f')
    return c.major == major && c.minor <= minor;
  return c.number() <= major * 10 + minor;
}

/// ptxas can assemble PTX for .target `ptx` into a cubin for `c`.
inline bool ptxAssemblesFor(const Chip &ptx, const Chip &c) {
  if (ptx.suffix == 'a')
    return c == ptx;
  if (ptx.suffix == 'f')
    return c.major == ptx.major && c.minor >= ptx.minor;
  return c.number() >= ptx.number();
}

/// The order of a chip list: by number, and for one number sm_XY < sm_XYf < sm_XYa (the more
/// specific target later), so that the first chip is the one PTX for all of them is written for.
inline bool lowerThan(const Chip &a, const Chip &b) {
  auto rank = [](char s) { return s == 0 ? 0 : s == 'f' ? 1 : 2; };
  if (a.number() != b.number())
    return a.number() < b.number();
  return rank(a.suffix) < rank(b.suffix);
}

/// Why code made for `chip` does not run on a GPU of compute capability major.minor, as cubins
/// (`cubins`) or as PTX the driver JIT-compiles; "" when it does. (evo-evolve, before a search:
/// it times the cubins ptxas makes for its chip, or the PTX without ptxas.)
inline std::string whyNotRunnable(std::string_view chipName, int major, int minor, bool cubins) {
  std::optional<Chip> c = parse(chipName);
  if (!c)
    return "'" + std::string(chipName) + "' is not a chip name (sm_XY, sm_XYa or sm_XYf)";
  std::string family = "sm_" + std::to_string(c->number()) + " to sm_" +
                       std::to_string(c->major * 10 + 9);
  if (c->suffix == 'a' && !(c->major == major && c->minor == minor))
    return std::string(cubins ? "a cubin" : "PTX") + " for " + c->name() + " runs on " +
           deviceName(c->major, c->minor) + " only";
  if (cubins && !cubinRunsOn(*c, major, minor))
    return "a cubin for " + c->name() + " runs on " + family + " only";
  if (!cubins && !ptxRunsOn(*c, major, minor))
    return c->suffix == 'f' ? "PTX for " + c->name() + " runs on " + family + " only"
                            : "PTX for " + c->name() + " needs " + deviceName(c->major, c->minor) +
                                  " or newer";
  return "";
}

/// What a loader loads on a GPU: binary `binary` of the manifest's list, or the PTX (-1), or
/// nothing (`ok` false, `why` says what there is).
struct ImageChoice {
  bool ok = false;
  int binary = -1;
  std::string why;
};

/// The image for a GPU of compute capability major.minor: among the cubins that run on it (CUDA's
/// binary compatibility), the newest, i.e. the first one built for exactly that GPU if there is
/// one; else the PTX (JIT) when it can run there (`ptxChip` empty: assumed to). Cubins whose chip
/// does not parse are never chosen.
inline ImageChoice chooseImage(const std::vector<std::string> &binaryChips,
                               std::string_view ptxChip, int major, int minor) {
  ImageChoice choice;
  int best = -1;
  for (size_t i = 0; i < binaryChips.size(); ++i) {
    std::optional<Chip> c = parse(binaryChips[i]);
    if (c && cubinRunsOn(*c, major, minor) &&
        (best < 0 || parse(binaryChips[best])->minor < c->minor))
      best = static_cast<int>(i);
  }
  if (best >= 0) {
    choice.ok = true;
    choice.binary = best;
    return choice;
  }
  std::optional<Chip> ptx = parse(ptxChip);
  if (ptxChip.empty() || (ptx && ptxRunsOn(*ptx, major, minor))) {
    choice.ok = true;
    return choice;
  }
  std::string dev = deviceName(major, minor);
  choice.why = "no kernel image runs on this GPU (" + dev + "): ";
  if (!binaryChips.empty()) {
    choice.why += "the cubins are for ";
    for (size_t i = 0; i < binaryChips.size(); ++i)
      choice.why += (i ? ", " : "") + binaryChips[i];
    choice.why += " and ";
  }
  choice.why += "the PTX is for " + std::string(ptxChip);
  if (ptx && ptx->suffix == 'a')
    choice.why += " (runs only on " + deviceName(ptx->major, ptx->minor) + ")";
  else if (ptx && ptx->suffix == 'f')
    choice.why += " (runs on " + deviceName(ptx->major, ptx->minor) + " and newer of its family)";
  else if (ptx)
    choice.why += " (needs " + ptx->name() + " or newer)";
  else
    choice.why += " (not a chip name)";
  return choice;
}

} // namespace evo::chips

#endif // EVO_RUNTIME_CHIPRULES_H
