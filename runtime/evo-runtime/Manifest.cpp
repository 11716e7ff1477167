//===- Manifest.cpp - parsing and validating an untrusted evo-manifest/1 ---===//
//
// The manifest comes from anywhere (a download, a cache, a hostile author): every field is
// checked before it becomes a size, an index, a launch dimension, a symbol or a file name. The
// limits mirror evo-opt's own (include/evo/Conversion/InputChecks.h), which this library cannot
// include (it has no LLVM).
//
//===----------------------------------------------------------------------===//

#include "Internal.h"
#include "evo/Runtime/ChipRules.h"
#include "evo/Runtime/TensorMap.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace evo::runtime {

using json = nlohmann::json;

namespace {

struct Invalid {
  std::string message;
};

[[noreturn]] void fail(std::string message) { throw Invalid{std::move(message)}; }

/// `s` for a message: printable ASCII kept, everything else as \xNN, at most 64 bytes.
std::string quote(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 64; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > 64)
    out += "...";
  return out + "'";
}

/// The deepest bracket nesting of JSON text (strings skipped), so that neither the parser nor the
/// destruction of the parsed tree recurses without bound on hostile input.
size_t nestingDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

const json &field(const json &obj, const char *key, const std::string &where) {
  auto it = obj.find(key);
  if (it == obj.end())
    fail(where + ": missing '" + key + "'");
  return *it;
}

std::string str(const json &obj, const char *key, const std::string &where, size_t maxLen = 4096) {
  const json &v = field(obj, key, where);
  if (!v.is_string())
    fail(where + ": '" + key + "' must be a string");
  const std::string &s = v.get_ref<const std::string &>();
  if (s.size() > maxLen)
    fail(where + ": '" + key + "' is longer than " + std::to_string(maxLen) + " bytes");
  return s;
}

std::string optStr(const json &obj, const char *key, const std::string &where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null())
    return "";
  return str(obj, key, where, 256);
}

int64_t integer(const json &v, const std::string &what, int64_t lo, int64_t hi) {
  int64_t x;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(what + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    x = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else {
    fail(what + " must be an integer");
  }
  if (x < lo || x > hi)
    fail(what + " is " + std::to_string(x) + ", out of range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "]");
  return x;
}

int64_t intField(const json &obj, const char *key, const std::string &where, int64_t lo,
                 int64_t hi) {
  return integer(field(obj, key, where), where + ": '" + key + "'", lo, hi);
}

const json &array(const json &obj, const char *key, const std::string &where, size_t maxLen) {
  const json &v = field(obj, key, where);
  if (!v.is_array())
    fail(where + ": '" + key + "' must be an array");
  if (v.size() > maxLen)
    fail(where + ": '" + key + "' has " + std::to_string(v.size()) + " entries, more than " +
         std::to_string(maxLen));
  return v;
}

void object(const json &v, const std::string &where) {
  if (!v.is_object())
    fail(where + " must be an object");
}

/// The "sha256" key of `obj`: 64 lowercase hex digits (`what` names it in the message).
std::string sha256Of(const json &obj, const std::string &where, const std::string &what) {
  std::string h = str(obj, "sha256", where, 64);
  if (h.size() != 64 || h.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail(what + " must be 64 lowercase hex digits");
  return h;
}

/// The "file" key of `obj`: a plain file name in the manifest's directory.
std::string fileOf(const json &obj, const std::string &where, const std::string &what) {
  std::string f = str(obj, "file", where, 255);
  if (!detail::isPlainFileName(f))
    fail(what + " " + quote(f) +
         " must be a plain file name in the manifest's directory (no '/', not '.' or '..')");
  return f;
}

/// Keys that change how a kernel is launched must be understood: refuse the others.
void onlyKeys(const json &obj, std::initializer_list<const char *> known, const std::string &where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char *k : known)
      ok |= it.key() == k;
    if (!ok)
      fail(where + ": unknown key " + quote(it.key()) +
           " (a manifest newer than this runtime? it may need tensor maps or other launch "
           "arguments this runtime cannot build)");
  }
}

/// An optional boolean key (false when absent).
bool flag(const json &obj, const char *key, const std::string &where) {
  auto it = obj.find(key);
  if (it == obj.end())
    return false;
  if (!it->is_boolean())
    fail(where + ": '" + key + "' must be a boolean");
  return it->get<bool>();
}

DType dtypeOf(const json &obj, const std::string &where) {
  std::string s = str(obj, "dtype", where, 64);
  static const std::pair<const char *, DType> names[] = {
      {"f16", DType::F16}, {"bf16", DType::BF16}, {"f32", DType::F32}, {"f64", DType::F64},
      {"i8", DType::I8},   {"i16", DType::I16},   {"i32", DType::I32}, {"i64", DType::I64},
      {"ui8", DType::U8},  {"i1", DType::Bool}};
  for (auto &[name, dt] : names)
    if (s == name)
      return dt;
  fail(where + ": unsupported dtype " + quote(s));
}

/// A shape: at most kMaxRank dimensions of at least 1, whose element count times `elementBytes`
/// stays within kMaxBufferBytes. Returns the byte size.
uint64_t shapeOf(const json &obj, const std::string &where, size_t elementBytes,
                 std::vector<int64_t> &shape) {
  const json &dims = array(obj, "shape", where, Manifest::kMaxRank);
  uint64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = integer(dims[i], where + ": shape[" + std::to_string(i) + "]", 1,
                        detail::kMaxBufferBytes);
    if (count > detail::kMaxBufferBytes / static_cast<uint64_t>(d))
      fail(where + ": shape has more than 2^40 elements");
    count *= static_cast<uint64_t>(d);
    shape.push_back(d);
  }
  if (count > detail::kMaxBufferBytes / elementBytes)
    fail(where + ": buffer larger than 1 TiB");
  return count * elementBytes;
}

/// The "tensor_map" object of a buffer of role tensor_map (a 128-byte i8 buffer). The checks
/// against its source come once every buffer is known.
TensorMapInfo tensorMapOf(const json &b, const BufferInfo &info, const std::string &where,
                          size_t numBuffers) {
  if (info.dtype != DType::I8 || info.shape != std::vector<int64_t>{int64_t(tensormap::kDescriptorBytes)})
    fail(where + ": a tensor map must be i8[128] (a CUtensorMap), not " +
         detail::describe(info.dtype, info.shape));
  if (info.zeroInit)
    fail(where + ": a tensor map cannot be zero_init (the runtime encodes it)");
  const json &t = field(b, "tensor_map", where);
  std::string tw = where + ": tensor_map";
  object(t, tw);
  onlyKeys(t, {"source", "element_type", "dims", "strides", "box", "swizzle"}, tw);
  TensorMapInfo tm;
  tm.source = static_cast<unsigned>(
      intField(t, "source", tw, 0, static_cast<int64_t>(numBuffers) - 1));
  tm.elementType = str(t, "element_type", tw, 16);
  auto sizes = [&](const char *key, std::vector<int64_t> &out) {
    const json &a = array(t, key, tw, tensormap::kMaxRank);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(integer(a[i], tw + ": " + key + "[" + std::to_string(i) + "]", 0,
                            int64_t(1) << 40));
  };
  sizes("dims", tm.dims);
  sizes("strides", tm.strides);
  sizes("box", tm.box);
  tm.swizzle = intField(t, "swizzle", tw, 0, 128);
  std::string why = tensormap::checkShape(tm.dims, tm.strides, tm.box, tm.swizzle);
  if (!why.empty())
    fail(tw + ": " + why);
  return tm;
}

/// The "data" object of a constant buffer: where its bytes lie in the constants file (checked
/// against the file's size and the other constants once the root's "constants" is read).
uint64_t constantDataOf(const json &b, const BufferInfo &info, const std::string &where) {
  if (info.zeroInit)
    fail(where + ": a constant cannot be zero_init (its bytes come from the constants file)");
  if (info.byValue)
    fail(where + ": a constant cannot be 'by_value' (the runtime passes its device copy)");
  const json &d = field(b, "data", where);
  std::string dw = where + ": data";
  object(d, dw);
  onlyKeys(d, {"offset", "bytes"}, dw);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto offset = static_cast<uint64_t>(intField(d, "offset", dw, 0, kMax));
  if (intField(d, "bytes", dw, 0, kMax) != static_cast<int64_t>(info.bytes))
    fail(dw + ": 'bytes' is not the buffer's size (" + std::to_string(info.bytes) + ")");
  if (offset % Manifest::kConstantAlignment)
    fail(dw + ": 'offset' " + std::to_string(offset) + " is not a multiple of " +
         std::to_string(Manifest::kConstantAlignment));
  return offset;
}

/// "target": what evo-opt compiled for, and the chips of its cubins.
void parseTarget(const json &root, Manifest &m) {
  if (auto t = root.find("target"); t != root.end() && !t->is_null()) {
    object(*t, "manifest: 'target'");
    m.chip = optStr(*t, "chip", "manifest: target");
    m.features = optStr(*t, "features", "manifest: target");
    if (auto cs = t->find("chips"); cs != t->end() && !cs->is_null()) {
      const json &list = array(*t, "chips", "manifest: target", detail::kMaxBinaries);
      for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string() || !chips::parse(list[i].get_ref<const std::string &>()))
          fail("manifest: target: chips[" + std::to_string(i) +
               "] is not a chip name (sm_XY, sm_XYa or sm_XYf)");
        m.chips.push_back(list[i].get<std::string>());
      }
    }
  }
}

void parsePtx(const json &root, Manifest &m) {
  const json &ptx = field(root, "ptx", "manifest");
  object(ptx, "manifest: 'ptx'");
  m.ptxFile = fileOf(ptx, "manifest: ptx", "manifest: ptx file");
  m.ptxBytes = static_cast<uint64_t>(
      intField(ptx, "bytes", "manifest: ptx", 0, static_cast<int64_t>(detail::kMaxImageBytes)));
  m.ptxSha256 = sha256Of(ptx, "manifest: ptx", "manifest: ptx sha256");
}

/// A cubin per chip (evo-opt's chips=), files beside the PTX; the loader picks one per GPU.
void parseBinaries(const json &root, Manifest &m) {
  if (auto bins = root.find("binaries"); bins != root.end() && !bins->is_null()) {
    const json &list = array(root, "binaries", "manifest", detail::kMaxBinaries);
    for (size_t i = 0; i < list.size(); ++i) {
      std::string where = "binary " + std::to_string(i);
      const json &b = list[i];
      object(b, where);
      onlyKeys(b, {"chip", "file", "bytes", "sha256"}, where);
      BinaryInfo info;
      info.chip = str(b, "chip", where, 16);
      if (!chips::parse(info.chip))
        fail(where + ": chip " + quote(info.chip) +
             " is not a chip name (sm_XY, sm_XYa or sm_XYf)");
      where = "binary " + std::to_string(i) + " (" + info.chip + ")";
      info.file = fileOf(b, where, where + ": file");
      info.bytes = static_cast<uint64_t>(
          intField(b, "bytes", where, 1, static_cast<int64_t>(detail::kMaxImageBytes)));
      info.sha256 = sha256Of(b, where, where + ": sha256");
      if (info.file == m.ptxFile)
        fail(where + ": file " + quote(info.file) + " is the PTX's");
      for (const BinaryInfo &other : m.binaries) {
        if (other.chip == info.chip)
          fail(where + ": a second cubin for " + info.chip);
        if (other.file == info.file)
          fail(where + ": file " + quote(info.file) + " is also " + other.chip + "'s");
      }
      m.binaries.push_back(std::move(info));
    }
  }
}

/// Buffers: in ABI order; `index` restates the position.
void parseBuffers(const json &root, Manifest &m) {
  const json &buffers = array(root, "buffers", "manifest", detail::kMaxBuffers);
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::string where = "buffer " + std::to_string(i);
    const json &b = buffers[i];
    object(b, where);
    onlyKeys(b,
             {"index", "name", "role", "dtype", "shape", "bytes", "zero_init", "tensor_map",
              "by_value", "data"},
             where);
    BufferInfo info;
    info.index = static_cast<unsigned>(i);
    if (intField(b, "index", where, 0, detail::kMaxBuffers) != static_cast<int64_t>(i))
      fail(where + ": 'index' must equal its position in 'buffers'");
    info.name = str(b, "name", where, 256);
    if (!detail::isSymbol(info.name))
      fail(where + ": name " + quote(info.name) + " is not a valid symbol");
    where = "buffer " + std::to_string(i) + " ('" + info.name + "')";
    std::string role = str(b, "role", where, 16);
    if (role == "input")
      info.role = Role::Input;
    else if (role == "output")
      info.role = Role::Output;
    else if (role == "scratch")
      info.role = Role::Scratch;
    else if (role == "tensor_map")
      info.role = Role::TensorMap;
    else if (role == "constant")
      info.role = Role::Constant;
    else
      fail(where + ": role " + quote(role) +
           " is not input, output, scratch, tensor_map or constant");
    info.dtype = dtypeOf(b, where);
    info.bytes = shapeOf(b, where, dtypeSize(info.dtype), info.shape);
    if (intField(b, "bytes", where, 0, detail::kMaxBufferBytes) !=
        static_cast<int64_t>(info.bytes))
      fail(where + ": 'bytes' is not the size of its shape and dtype (" +
           std::to_string(info.bytes) + ")");
    info.zeroInit = flag(b, "zero_init", where);
    if (info.zeroInit && info.role == Role::Input)
      fail(where + ": an input cannot be zero_init (the runtime never writes inputs)");
    info.byValue = flag(b, "by_value", where);
    if (info.role == Role::Constant)
      info.constantOffset = constantDataOf(b, info, where);
    else if (b.contains("data"))
      fail(where + ": has 'data' but its role is not constant (only constants' bytes come from "
                   "the constants file)");
    if (info.byValue && (info.role != Role::Input || !info.shape.empty()))
      fail(where + ": 'by_value' (a scalar argument, passed by value) needs an input of shape [], "
                   "not " + role + " " + detail::describe(info.dtype, info.shape));
    if (info.role == Role::TensorMap)
      info.tensorMap = tensorMapOf(b, info, where, buffers.size());
    else if (b.contains("tensor_map"))
      fail(where + ": has a 'tensor_map' but its role is not tensor_map");
    (info.role == Role::Input      ? m.inputs
     : info.role == Role::Output   ? m.outputs
     : info.role == Role::Scratch  ? m.scratch
     : info.role == Role::Constant ? m.constants
                                   : m.tensorMaps)
        .push_back(info.index);
    m.buffers.push_back(std::move(info));
  }
}

/// "constants": the file of the constant buffers' bytes, present exactly when some buffer is a
/// constant; every constant lies inside it, none overlaps another.
void parseConstants(const json &root, Manifest &m) {
  auto c = root.find("constants");
  bool given = c != root.end() && !c->is_null();
  if (!given) {
    if (!m.constants.empty())
      fail("manifest: buffer " + std::to_string(m.constants[0]) + " ('" +
           m.buffers[m.constants[0]].name +
           "') is a constant, but the manifest has no 'constants' (the file of their bytes)");
    return;
  }
  const std::string where = "manifest: constants";
  if (m.constants.empty())
    fail(where + ": given, but no buffer has role constant");
  object(*c, where);
  onlyKeys(*c, {"file", "bytes", "sha256"}, where);
  ConstantsInfo &f = m.constantsFile;
  f.file = fileOf(*c, where, where + ": file");
  f.bytes = static_cast<uint64_t>(intField(*c, "bytes", where, 1, detail::kMaxConstantsBytes));
  f.sha256 = sha256Of(*c, where, where + ": sha256");
  if (f.file == m.ptxFile)
    fail(where + ": file " + quote(f.file) + " is the PTX's");
  for (const BinaryInfo &b : m.binaries)
    if (b.file == f.file)
      fail(where + ": file " + quote(f.file) + " is the " + b.chip + " cubin's");
  std::vector<unsigned> byOffset = m.constants;
  std::sort(byOffset.begin(), byOffset.end(), [&](unsigned a, unsigned b) {
    return std::make_pair(m.buffers[a].constantOffset, a) <
           std::make_pair(m.buffers[b].constantOffset, b);
  });
  for (size_t i = 0; i < byOffset.size(); ++i) {
    const BufferInfo &b = m.buffers[byOffset[i]];
    std::string range = "[" + std::to_string(b.constantOffset) + ", " +
                        std::to_string(b.constantOffset + b.bytes) + ")"; // < 2^63 + 2^40
    if (b.constantOffset > f.bytes || b.bytes > f.bytes - b.constantOffset)
      fail("buffer " + std::to_string(b.index) + " ('" + b.name + "'): data " + range +
           " lies outside the constants file of " + std::to_string(f.bytes) + " bytes");
    if (i > 0) {
      const BufferInfo &prev = m.buffers[byOffset[i - 1]];
      if (b.constantOffset < prev.constantOffset + prev.bytes)
        fail("buffer " + std::to_string(b.index) + " ('" + b.name + "'): data " + range +
             " overlaps that of buffer " + std::to_string(prev.index) + " ('" + prev.name + "')");
    }
  }
}

/// Tensor maps, against their sources (which may come later in the list): the rules of
/// evo/Runtime/TensorMap.h, as the plan verifier applies them, so that no map lets TMA reach
/// beyond the buffer it is encoded over.
void checkTensorMaps(const Manifest &m) {
  for (unsigned t : m.tensorMaps) {
    const BufferInfo &map = m.buffers[t];
    const TensorMapInfo &tm = map.tensorMap;
    std::string where = "buffer " + std::to_string(t) + " ('" + map.name + "'): tensor_map";
    const BufferInfo &src = m.buffers[tm.source];
    if (src.role == Role::TensorMap)
      fail(where + ": its source '" + src.name + "' is a tensor map itself");
    if (src.byValue)
      fail(where + ": its source '" + src.name + "' is a scalar argument (by_value)");
    if (tm.elementType != dtypeName(src.dtype))
      fail(where + ": element_type " + quote(tm.elementType) + " is not the dtype of its source '" +
           src.name + "' (" + dtypeName(src.dtype) + ")");
    tensormap::ElementInfo element;
    if (!tensormap::elementInfo(tm.elementType, element))
      fail(where + ": element type " + quote(tm.elementType) + " is not one TMA supports (" +
           tensormap::kSupportedElementTypes + ")");
    std::string why = tensormap::check(tm.dims, tm.strides, tm.box, tm.swizzle, element.bytes,
                                       src.bytes);
    if (!why.empty())
      fail(where + " over '" + src.name + "': " + why);
  }
}

/// The scratch buffers, each at an aligned offset of the one workspace the runtime allocates.
void layOutWorkspace(Manifest &m) {
  uint64_t offset = 0;
  for (unsigned s : m.scratch) {
    m.buffers[s].workspaceOffset = offset;
    uint64_t size = (m.buffers[s].bytes + Manifest::kWorkspaceAlignment - 1) /
                    Manifest::kWorkspaceAlignment * Manifest::kWorkspaceAlignment;
    offset += size; // at most 4096 buffers of at most 2^40 bytes: no overflow
  }
  m.workspaceBytes = offset;
}

/// A kernel parameter: a device pointer to a buffer of this dtype and shape, or (byValue) a
/// scalar argument's value of this dtype.
struct Param {
  DType dtype;
  std::vector<int64_t> shape;
  bool byValue = false;
};
struct Kernels {
  std::vector<std::vector<Param>> params;
  std::map<std::string, size_t> index; // launches look kernels up by name
};

/// Kernels: their parameter lists check every launch's buffers.
Kernels parseKernels(const json &root, Manifest &m) {
  Kernels out;
  const json &kernels = array(root, "kernels", "manifest", detail::kMaxKernels);
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string where = "kernel " + std::to_string(i);
    const json &k = kernels[i];
    object(k, where);
    std::string name = str(k, "name", where, 256);
    if (!detail::isSymbol(name))
      fail(where + ": name " + quote(name) + " is not a valid PTX symbol");
    if (!out.index.emplace(name, i).second)
      fail(where + ": kernel '" + name + "' is listed twice");
    where = "kernel '" + name + "'";
    const json &ps = array(k, "params", where, detail::kMaxParams);
    std::vector<Param> list;
    for (size_t j = 0; j < ps.size(); ++j) {
      std::string pw = where + ": param " + std::to_string(j);
      object(ps[j], pw);
      // Every parameter is a device pointer (tensor maps too: buffers of role tensor_map, which
      // the runtime encodes and owns) or a scalar's value (by_value); any other key is refused.
      onlyKeys(ps[j], {"dtype", "shape", "by_value"}, pw);
      Param p;
      p.dtype = dtypeOf(ps[j], pw);
      shapeOf(ps[j], pw, dtypeSize(p.dtype), p.shape);
      p.byValue = flag(ps[j], "by_value", pw);
      if (p.byValue && !p.shape.empty())
        fail(pw + ": a value (by_value) has shape [], not " + detail::describe(p.dtype, p.shape));
      list.push_back(std::move(p));
    }
    m.kernels.push_back(name);
    out.params.push_back(std::move(list));
  }
  return out;
}

/// Launches: within CUDA's limits, each passing buffers its kernel's parameters accept; every
/// output is written by one.
void parseLaunches(const json &root, const Kernels &kernels, Manifest &m) {
  size_t numTasks = 0;
  if (auto t = root.find("tasks"); t != root.end()) {
    if (!t->is_array())
      fail("manifest: 'tasks' must be an array");
    numTasks = t->size();
  }

  const json &launches = array(root, "launches", "manifest", detail::kMaxLaunches);
  if (launches.empty())
    fail("manifest has no launches (a gpu.module without a launch plan cannot be run)");
  std::vector<bool> written(m.buffers.size(), false);
  for (size_t i = 0; i < launches.size(); ++i) {
    std::string where = "launch " + std::to_string(i);
    const json &l = launches[i];
    object(l, where);
    onlyKeys(l, {"kernel", "task", "grid", "block", "dynamic_shared_memory", "args"}, where);
    LaunchInfo info;
    info.kernel = str(l, "kernel", where, 256);
    auto found = kernels.index.find(info.kernel);
    if (found == kernels.index.end())
      fail(where + ": kernel " + quote(info.kernel) + " is not listed in 'kernels'");
    size_t k = found->second;
    info.kernelIndex = static_cast<unsigned>(k);
    where = "launch " + std::to_string(i) + " ('" + info.kernel + "')";
    if (l.contains("task") && numTasks > 0)
      intField(l, "task", where, 0, static_cast<int64_t>(numTasks) - 1);
    const json &grid = array(l, "grid", where, 3), &block = array(l, "block", where, 3);
    if (grid.size() != 3 || block.size() != 3)
      fail(where + ": 'grid' and 'block' need 3 dimensions");
    // CUDA's limits on every architecture since sm_30.
    info.grid[0] = static_cast<uint32_t>(integer(grid[0], where + ": grid x", 1, detail::kMaxGridX));
    info.grid[1] = static_cast<uint32_t>(integer(grid[1], where + ": grid y", 1, detail::kMaxGridYZ));
    info.grid[2] = static_cast<uint32_t>(integer(grid[2], where + ": grid z", 1, detail::kMaxGridYZ));
    info.block[0] = static_cast<uint32_t>(integer(block[0], where + ": block x", 1, 1024));
    info.block[1] = static_cast<uint32_t>(integer(block[1], where + ": block y", 1, 1024));
    info.block[2] = static_cast<uint32_t>(integer(block[2], where + ": block z", 1, 64));
    if (uint64_t(info.block[0]) * info.block[1] * info.block[2] > 1024)
      fail(where + ": a block of more than 1024 threads");
    info.dynamicSharedMemory = static_cast<uint32_t>(
        intField(l, "dynamic_shared_memory", where, 0, detail::kMaxDynamicSharedMemory));
    const json &args = array(l, "args", where, detail::kMaxParams);
    const std::vector<Param> &want = kernels.params[k];
    if (args.size() != want.size())
      fail(where + ": passes " + std::to_string(args.size()) + " buffers to a kernel of " +
           std::to_string(want.size()) + " parameters");
    for (size_t j = 0; j < args.size(); ++j) {
      unsigned a = static_cast<unsigned>(integer(args[j], where + ": args[" + std::to_string(j) + "]",
                                                 0, static_cast<int64_t>(m.buffers.size()) - 1));
      const BufferInfo &buf = m.buffers[a];
      if (buf.dtype != want[j].dtype || buf.shape != want[j].shape)
        fail(where + ": parameter " + std::to_string(j) + " is " + detail::describe(want[j].dtype, want[j].shape) +
             " but buffer '" + buf.name + "' is " + detail::describe(buf.dtype, buf.shape));
      if (buf.byValue != want[j].byValue)
        fail(where + ": parameter " + std::to_string(j) + " is " +
             (want[j].byValue ? "a value (by_value)" : "a pointer") + " but buffer '" + buf.name +
             "' is " + (buf.byValue ? "a scalar argument passed by value" : "a buffer"));
      written[a] = true;
      info.args.push_back(a);
    }
    m.launches.push_back(std::move(info));
  }
  for (unsigned o : m.outputs)
    if (!written[o])
      fail("output buffer '" + m.buffers[o].name + "' is passed to no launch (it would never be "
           "written)");
}

Manifest parseTree(const json &root) {
  Manifest m;
  object(root, "manifest");
  std::string format = str(root, "format", "manifest", 64);
  if (format != "evo-manifest/1")
    fail("not an evo manifest: format is " + quote(format) + ", expected 'evo-manifest/1'");
  m.name = str(root, "name", "manifest");
  if (!detail::isSymbol(m.name))
    fail("manifest: name " + quote(m.name) + " is not a valid symbol ([A-Za-z_][A-Za-z0-9_$]*, at "
         "most 200 bytes)");
  m.function = optStr(root, "function", "manifest");
  parseTarget(root, m);
  parsePtx(root, m);
  parseBinaries(root, m);
  parseBuffers(root, m);
  parseConstants(root, m);
  checkTensorMaps(m);
  layOutWorkspace(m);
  Kernels kernels = parseKernels(root, m);
  parseLaunches(root, kernels, m);
  return m;
}

} // namespace

namespace detail {

bool isSymbol(std::string_view s) {
  if (s.empty() || s.size() > 200)
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && (digit || c == '$'))))
      return false;
  }
  return true;
}

bool isPlainFileName(std::string_view s) {
  if (s.empty() || s.size() > 255 || s == "." || s == "..")
    return false;
  for (char c : s)
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return false;
  return true;
}

std::string describe(DType dtype, const std::vector<int64_t> &shape) {
  std::string s = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Expected<std::string> readFile(int dirFd, const std::string &name, const std::string &display,
                               uint64_t maxBytes, bool noFollow, uint64_t *size) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (noFollow ? O_NOFOLLOW : 0);
  int fd = ::openat(dirFd, name.c_str(), flags);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP && noFollow)
      return Error(Error::Code::Io, display + ": is a symbolic link (refused: the files a "
                                              "manifest names must lie in its directory)");
    return Error(Error::Code::Io, display + ": " + std::strerror(e));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return Error(Error::Code::Io, display + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return Error(Error::Code::Io, display + ": not a regular file");
  if (size)
    *size = static_cast<uint64_t>(st.st_size);
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    return Error(Error::Code::Io, display + ": larger than " + std::to_string(maxBytes) + " bytes");
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Error(Error::Code::Io, display + ": " + std::strerror(errno));
    if (n == 0)
      break; // shrank while reading: the size check against the manifest reports it
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  return Expected<std::string>(std::move(data));
}

} // namespace detail

Expected<Manifest> Manifest::parse(std::string_view text) {
  if (text.size() > detail::kMaxManifestBytes)
    return Error(Error::Code::InvalidManifest,
                 "manifest larger than " + std::to_string(detail::kMaxManifestBytes) + " bytes");
  if (nestingDepth(text) > detail::kMaxNesting)
    return Error(Error::Code::InvalidManifest,
                 "manifest nests deeper than " + std::to_string(detail::kMaxNesting) + " levels");
  try {
    json root = json::parse(text.begin(), text.end());
    return parseTree(root);
  } catch (const Invalid &e) {
    return Error(Error::Code::InvalidManifest, e.message);
  } catch (const json::exception &e) {
    return Error(Error::Code::InvalidManifest, std::string("manifest is not valid JSON: ") + e.what());
  } catch (const std::exception &e) {
    return Error(Error::Code::InvalidManifest, std::string("manifest: ") + e.what());
  } catch (...) {
    return Error(Error::Code::InvalidManifest, "manifest: unexpected error while parsing");
  }
}

Expected<Manifest> Manifest::load(const std::string &path) {
  Expected<std::string> text =
      detail::readFile(AT_FDCWD, path, path, detail::kMaxManifestBytes, /*noFollow=*/false);
  if (!text)
    return text.error();
  Expected<Manifest> m = parse(*text);
  if (!m)
    return Error(m.error().code(), path + ": " + m.error().message());
  return m;
}

} // namespace evo::runtime
