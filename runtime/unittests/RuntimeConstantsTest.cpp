//===- RuntimeConstantsTest.cpp - constant buffers, without a GPU ---------===//
//
// A manifest's constant buffers (role "constant", "data": {"offset", "bytes"}) and the root's
// "constants" file: parsed, every malformed form refused with a message naming it, and the file
// read beside the manifest as the PTX is (no symbolic link, no FIFO, exact size and SHA-256).
// The uploads and launches are in RuntimeFakeDriverConstantsTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ConstantsManifest.h"
#include "RuntimeTestFixture.h"
#include "Sha256.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using evo::runtime::DType;
using evo::runtime::Error;
using evo::runtime::Manifest;
using evo::runtime::Module;
using evo::runtime::Role;
using evo::runtime::Status;
using evo::runtime::TensorRef;
using evo::runtime::testing::constantsFile;
using evo::runtime::testing::ConstantsFiles;
using evo::runtime::testing::constantsManifest;
using evo::runtime::testing::Hostile;
using evo::runtime::testing::kConstantsImage;
using evo::runtime::testing::parseError;
using json = nlohmann::json;

TEST(RuntimeConstants, ParsesConstantBuffers) {
  evo::runtime::Expected<Manifest> m = Manifest::parse(constantsManifest());
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->constants, (std::vector<unsigned>{1, 2}));
  // Callers pass the inputs and outputs only: constants are neither.
  EXPECT_EQ(m->inputs, (std::vector<unsigned>{0}));
  EXPECT_EQ(m->outputs, (std::vector<unsigned>{3}));
  EXPECT_EQ(m->tensorMaps, (std::vector<unsigned>{4}));
  EXPECT_EQ(m->workspaceBytes, 0u);
  EXPECT_EQ(m->buffers[1].role, Role::Constant);
  EXPECT_STREQ(evo::runtime::roleName(Role::Constant), "constant");
  EXPECT_EQ(m->buffers[1].constantOffset, 0u);
  EXPECT_EQ(m->buffers[2].constantOffset, 8448u);
  EXPECT_EQ(m->buffers[4].tensorMap.source, 1u); // a tensor map over a constant
  EXPECT_EQ(m->constantsFile.file, "cw.constants.bin");
  EXPECT_EQ(m->constantsFile.bytes, 8704u);
  EXPECT_EQ(m->constantsFile.sha256, evo::runtime::detail::sha256Hex(constantsFile()));
  // Without constants the file is empty.
  evo::runtime::Expected<Manifest> plain = Manifest::parse(evo::runtime::testing::validManifest().dump());
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->constants.empty());
  EXPECT_EQ(plain->constantsFile.file, "");
}

TEST(RuntimeConstants, RefusesMalformedConstants) {
  const Hostile cases[] = {
      {"missing constants", [](json &j) { j.erase("constants"); },
       "buffer 1 ('w') is a constant, but the manifest has no 'constants' (the file of their bytes)"},
      {"null constants", [](json &j) { j["constants"] = nullptr; }, "the manifest has no 'constants'"},
      {"constants not object", [](json &j) { j["constants"] = "cw.constants.bin"; },
       "manifest: constants must be an object"},
      {"constants unknown key", [](json &j) { j["constants"]["compression"] = "zstd"; },
       "manifest: constants: unknown key 'compression'"},
      {"constants missing file", [](json &j) { j["constants"].erase("file"); },
       "manifest: constants: missing 'file'"},
      {"constants escapes", [](json &j) { j["constants"]["file"] = "../w.bin"; },
       "manifest: constants: file '../w.bin' must be a plain file name"},
      {"constants absolute", [](json &j) { j["constants"]["file"] = "/etc/passwd"; },
       "must be a plain file name"},
      {"constants is the ptx", [](json &j) { j["constants"]["file"] = "cw.ptx"; },
       "manifest: constants: file 'cw.ptx' is the PTX's"},
      {"constants is a cubin",
       [](json &j) {
         j["binaries"] = {{{"chip", "sm_90a"}, {"file", "cw.constants.bin"}, {"bytes", 16},
                           {"sha256", std::string(64, 'a')}}};
       },
       "manifest: constants: file 'cw.constants.bin' is the sm_90a cubin's"},
      {"constants bytes zero", [](json &j) { j["constants"]["bytes"] = 0; }, "'bytes' is 0, out of range"},
      {"constants bytes float", [](json &j) { j["constants"]["bytes"] = 8704.0; }, "must be an integer"},
      {"constants sha", [](json &j) { j["constants"]["sha256"] = std::string(64, 'A'); },
       "manifest: constants: sha256 must be 64 lowercase hex digits"},
      {"role", [](json &j) { j["buffers"][1]["role"] = "weight"; },
       "role 'weight' is not input, output, scratch, tensor_map or constant"},
      {"missing data", [](json &j) { j["buffers"][1].erase("data"); }, "buffer 1 ('w'): missing 'data'"},
      {"data not object", [](json &j) { j["buffers"][1]["data"] = 0; }, "buffer 1 ('w'): data must be an object"},
      {"data unknown key", [](json &j) { j["buffers"][1]["data"]["stride"] = 2; },
       "buffer 1 ('w'): data: unknown key 'stride'"},
      {"data missing offset", [](json &j) { j["buffers"][1]["data"].erase("offset"); },
       "buffer 1 ('w'): data: missing 'offset'"},
      {"data offset negative", [](json &j) { j["buffers"][1]["data"]["offset"] = -256; }, "out of range"},
      {"data offset string", [](json &j) { j["buffers"][1]["data"]["offset"] = "0"; }, "must be an integer"},
      {"data offset unaligned", [](json &j) { j["buffers"][2]["data"]["offset"] = 8450; },
       "buffer 2 ('bias'): data: 'offset' 8450 is not a multiple of 256"},
      {"data bytes", [](json &j) { j["buffers"][2]["data"]["bytes"] = 128; },
       "buffer 2 ('bias'): data: 'bytes' is not the buffer's size (256)"},
      {"overlap", [](json &j) { j["buffers"][2]["data"]["offset"] = 7936; },
       "buffer 2 ('bias'): data [7936, 8192) overlaps that of buffer 1 ('w')"},
      {"same offset", [](json &j) { j["buffers"][2]["data"]["offset"] = 0; }, "overlaps that of buffer"},
      {"past the file", [](json &j) { j["buffers"][2]["data"]["offset"] = 8704; },
       "buffer 2 ('bias'): data [8704, 8960) lies outside the constants file of 8704 bytes"},
      {"file too short", [](json &j) { j["constants"]["bytes"] = 8703; },
       "data [8448, 8704) lies outside the constants file of 8703 bytes"},
      {"far past the file", [](json &j) { j["buffers"][2]["data"]["offset"] = 1ll << 62; },
       "lies outside the constants file"},
      {"data on an input", [](json &j) { j["buffers"][0]["data"] = {{"offset", 0}, {"bytes", 8192}}; },
       "buffer 0 ('x'): has 'data' but its role is not constant"},
      {"data on an output", [](json &j) { j["buffers"][3]["data"] = {{"offset", 0}, {"bytes", 16384}}; },
       "buffer 3 ('y'): has 'data' but its role is not constant"},
      {"zero_init", [](json &j) { j["buffers"][1]["zero_init"] = true; },
       "buffer 1 ('w'): a constant cannot be zero_init"},
      {"by_value", [](json &j) { j["buffers"][2]["by_value"] = true; },
       "buffer 2 ('bias'): a constant cannot be 'by_value'"},
      {"tensor_map", [](json &j) { j["buffers"][1]["tensor_map"] = j["buffers"][4]["tensor_map"]; },
       "buffer 1 ('w'): has a 'tensor_map' but its role is not tensor_map"},
  };
  for (const Hostile &c : cases) {
    json j = json::parse(constantsManifest());
    c.mutate(j);
    std::string msg = parseError(j.dump());
    EXPECT_NE(msg.find(c.expect), std::string::npos)
        << c.name << ": expected '" << c.expect << "' in: " << msg;
  }
  // A "constants" key without any constant buffer.
  json plain = evo::runtime::testing::validManifest();
  plain["constants"] = {{"file", "mm_relu.constants.bin"}, {"bytes", 256},
                        {"sha256", std::string(64, '0')}};
  EXPECT_EQ(parseError(plain.dump()), "manifest: constants: given, but no buffer has role constant");
}

TEST(RuntimeConstants, LoadsTheConstantsFileBesideTheManifest) {
  ConstantsFiles files;
  evo::runtime::Expected<Module> mod = Module::load(files.path());
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  EXPECT_EQ(mod->manifest().constants.size(), 2u);
  // The caller passes x and y only.
  auto at = [](uintptr_t p) { return reinterpret_cast<void *>(p); };
  std::vector<TensorRef> in = {TensorRef(at(0x100000), DType::F16, {64, 64})};
  std::vector<TensorRef> out = {TensorRef(at(0x300000), DType::F32, {64, 64})};
  EXPECT_TRUE(mod->checkArguments(in.data(), 1, out.data(), 1).ok());
  std::vector<TensorRef> withW = {in[0], TensorRef(at(0x200000), DType::F16, {64, 64})};
  Status s = mod->checkArguments(withW.data(), 2, out.data(), 1);
  EXPECT_NE(s.message().find("takes 1 inputs, got 2"), std::string::npos) << s.message();

  // An image given by the caller replaces the PTX, not the constants: they are still read.
  EXPECT_TRUE(Module::load(files.path(), {kConstantsImage}).ok());
  ASSERT_EQ(unlink(files.path("cw.constants.bin").c_str()), 0);
  auto given = Module::load(files.path(), {kConstantsImage});
  ASSERT_FALSE(given.ok());
  EXPECT_EQ(given.error().code(), Error::Code::Io);
  EXPECT_EQ(given.error().message(), files.path("cw.constants.bin") + ": No such file or directory");

  // From memory there is no directory to read them from.
  auto text = Module::fromMemory(constantsManifest(), kConstantsImage);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code(), Error::Code::InvalidManifest);
  EXPECT_EQ(text.error().message(),
            "evo-runtime: cw: its 2 constant buffers are in the file 'cw.constants.bin' beside the "
            "manifest, which only Module::load(path) reads (a manifest given as text has no "
            "directory)");
  EXPECT_FALSE(Module::fromMemory(constantsManifest(), kConstantsImage, /*trustedImage=*/true).ok());
}

TEST(RuntimeConstants, RefusesABadConstantsFile) {
  ConstantsFiles files;
  const std::string bin = files.path("cw.constants.bin");
  auto loadError = [&](Error::Code code) {
    evo::runtime::Expected<Module> mod = Module::load(files.path());
    if (mod.ok())
      return std::string("(loaded)");
    EXPECT_EQ(mod.error().code(), code) << mod.error().message();
    return mod.error().message();
  };
  // One byte short, one byte more, one byte changed.
  std::string data = constantsFile();
  files.write("cw.constants.bin", data.substr(0, data.size() - 1));
  EXPECT_EQ(loadError(Error::Code::InvalidManifest),
            bin + ": evo-runtime: cw: the constants file has 8703 bytes, the manifest says 8704");
  files.write("cw.constants.bin", data + "x"); // (not read: its size is enough)
  EXPECT_EQ(loadError(Error::Code::InvalidManifest),
            bin + ": evo-runtime: cw: the constants file has 8705 bytes, the manifest says 8704");
  std::string flipped = data;
  flipped[8448] ^= 1;
  files.write("cw.constants.bin", flipped);
  EXPECT_EQ(loadError(Error::Code::InvalidManifest),
            bin + ": evo-runtime: cw: the constants file does not match the manifest (sha256 " +
                evo::runtime::detail::sha256Hex(flipped) + ", the manifest says " +
                evo::runtime::detail::sha256Hex(data) + ")");

  // A symbolic link, even to the right bytes.
  evo::runtime::testing::TempDir other;
  other.write("real.bin", data);
  ASSERT_EQ(unlink(bin.c_str()), 0);
  ASSERT_EQ(symlink((other.path + "/real.bin").c_str(), bin.c_str()), 0);
  EXPECT_EQ(loadError(Error::Code::Io),
            bin + ": is a symbolic link (refused: the files a manifest names must lie in its "
                  "directory)");
  // A FIFO (the load must not block on it), a directory, nothing.
  ASSERT_EQ(unlink(bin.c_str()), 0);
  ASSERT_EQ(mkfifo(bin.c_str(), 0600), 0);
  EXPECT_EQ(loadError(Error::Code::Io), bin + ": not a regular file");
  ASSERT_EQ(unlink(bin.c_str()), 0);
  ASSERT_EQ(mkdir(bin.c_str(), 0700), 0);
  EXPECT_EQ(loadError(Error::Code::Io), bin + ": not a regular file");
  ASSERT_EQ(rmdir(bin.c_str()), 0);
  EXPECT_EQ(loadError(Error::Code::Io), bin + ": No such file or directory");
  // Back in place, it loads.
  files.write("cw.constants.bin", data);
  EXPECT_EQ(loadError(Error::Code::Io), "(loaded)");
}
