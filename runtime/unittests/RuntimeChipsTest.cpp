//===- RuntimeChipsTest.cpp - cubins per chip, without a GPU --------------===//
//
// evo-opt's chips=: the manifest's `binaries` (parsed, hostile ones refused), chip names, and
// the image each GPU gets (the cases python/tests/test_manifest.py shares).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestFixture.h"
#include "Sha256.h"
#include "evo-runtime/Module.h"
#include "evo/Runtime/ChipRules.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

using evo::runtime::DType;
using evo::runtime::Error;
using evo::runtime::Manifest;
using evo::runtime::Module;
using evo::runtime::Role;
using evo::runtime::Status;
using evo::runtime::TensorRef;
using evo::runtime::WorkspaceRef;
using evo::runtime::testing::Hostile;
using evo::runtime::testing::kPtx;
using evo::runtime::testing::mutated;
using evo::runtime::testing::parseError;
using evo::runtime::testing::TempDir;
using evo::runtime::testing::validManifest;
using json = nlohmann::json;

namespace {

/// Stand-in cubins: an ELF magic and a marker (the loader only checks size and sha256).
std::string cubinFor(const std::string &chip) { return std::string("\x7f" "ELF cubin ", 10) + chip; }

/// The valid manifest with a cubin per chip of `chips`, the PTX for the first.
json withBinaries(const std::vector<std::string> &chips) {
  json j = validManifest();
  j["target"]["chip"] = chips.front();
  j["target"]["chips"] = chips;
  json bins = json::array();
  for (const std::string &c : chips) {
    std::string image = cubinFor(c);
    bins.push_back({{"chip", c}, {"file", "mm_relu." + c + ".cubin"}, {"bytes", image.size()},
                    {"sha256", evo::runtime::detail::sha256Hex(image)}});
  }
  j["binaries"] = bins;
  return j;
}

} // namespace

TEST(RuntimeChips, ChoosesTheImageOfTheSharedCases) {
  // The same cases as python/tests/test_manifest.py (runtime/unittests/chip-selection.json).
  std::ifstream in(EVO_CHIP_CASES);
  ASSERT_TRUE(in.good()) << EVO_CHIP_CASES;
  json cases = json::parse(in)["cases"];
  ASSERT_GE(cases.size(), 20u);
  for (const json &c : cases) {
    std::vector<std::string> binaries = c["binaries"];
    int major = c["device"][0], minor = c["device"][1];
    evo::chips::ImageChoice got =
        evo::chips::chooseImage(binaries, c["ptx"].get<std::string>(), major, minor);
    std::string expect = c["expect"];
    std::string what = c.dump();
    if (expect == "none") {
      EXPECT_FALSE(got.ok) << what;
      EXPECT_EQ(got.why, c["why"].get<std::string>()) << what;
    } else if (expect == "ptx") {
      EXPECT_TRUE(got.ok && got.binary == -1) << what << " got binary " << got.binary;
    } else {
      ASSERT_TRUE(got.ok && got.binary >= 0) << what << " got " << got.binary << " " << got.why;
      EXPECT_EQ(binaries[got.binary], expect) << what;
    }
  }
}

TEST(RuntimeChips, ParsesChipNames) {
  auto c = evo::chips::parse("sm_90a");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->major, 9);
  EXPECT_EQ(c->minor, 0);
  EXPECT_EQ(c->suffix, 'a');
  EXPECT_EQ(c->name(), "sm_90a");
  c = evo::chips::parse("sm_121f");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->major, 12);
  EXPECT_EQ(c->minor, 1);
  for (const char *bad : {"", "sm_", "sm_9", "sm_1000", "sm_90b", "sm_0a", "SM_90", "sm_9x",
                          "compute_90", "sm_90aa", "sm_a"})
    EXPECT_FALSE(evo::chips::parse(bad)) << bad;
  // ptxas: PTX for sm_80 assembles for newer chips, PTX for sm_90a only for sm_90a.
  using evo::chips::ptxAssemblesFor;
  EXPECT_TRUE(ptxAssemblesFor(*evo::chips::parse("sm_80"), *evo::chips::parse("sm_90a")));
  EXPECT_FALSE(ptxAssemblesFor(*evo::chips::parse("sm_90"), *evo::chips::parse("sm_80")));
  EXPECT_FALSE(ptxAssemblesFor(*evo::chips::parse("sm_90a"), *evo::chips::parse("sm_100a")));
  EXPECT_TRUE(ptxAssemblesFor(*evo::chips::parse("sm_100f"), *evo::chips::parse("sm_103a")));
  EXPECT_FALSE(ptxAssemblesFor(*evo::chips::parse("sm_100f"), *evo::chips::parse("sm_120")));
}

TEST(RuntimeChips, ParsesBinaries) {
  auto m = Manifest::parse(withBinaries({"sm_80", "sm_90a"}).dump());
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->chips, (std::vector<std::string>{"sm_80", "sm_90a"}));
  ASSERT_EQ(m->binaries.size(), 2u);
  EXPECT_EQ(m->binaries[1].chip, "sm_90a");
  EXPECT_EQ(m->binaries[1].file, "mm_relu.sm_90a.cubin");
  EXPECT_EQ(m->binaries[1].bytes, cubinFor("sm_90a").size());
  // A manifest without binaries (chip=) has none.
  m = Manifest::parse(validManifest().dump());
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->binaries.empty());
}

TEST(RuntimeChips, RefusesHostileBinaries) {
  // python/tests/test_manifest.py runs the same cases with the same messages.
  const Hostile cases[] = {
      {"not an array", [](json &j) { j["binaries"] = json::object(); }, "'binaries' must be an array"},
      {"too many", [](json &j) { j["binaries"] = std::vector<int>(65, 1); }, "more than 64"},
      {"not an object", [](json &j) { j["binaries"][0] = "sm_80"; }, "binary 0 must be an object"},
      {"unknown key", [](json &j) { j["binaries"][0]["kind"] = "fatbin"; }, "unknown key 'kind'"},
      {"missing file", [](json &j) { j["binaries"][0].erase("file"); }, "missing 'file'"},
      {"chip", [](json &j) { j["binaries"][0]["chip"] = "compute_80"; },
       "binary 0: chip 'compute_80' is not a chip name"},
      {"chip type", [](json &j) { j["binaries"][0]["chip"] = 80; }, "'chip' must be a string"},
      {"file escapes", [](json &j) { j["binaries"][1]["file"] = "../x.cubin"; },
       "binary 1 (sm_90a): file '../x.cubin' must be a plain file name"},
      {"file absolute", [](json &j) { j["binaries"][1]["file"] = "/etc/passwd"; }, "must be a plain file name"},
      {"file is the ptx", [](json &j) { j["binaries"][1]["file"] = "mm_relu.ptx"; }, "is the PTX's"},
      {"file twice", [](json &j) { j["binaries"][1]["file"] = j["binaries"][0]["file"]; },
       "file 'mm_relu.sm_80.cubin' is also sm_80's"},
      {"chip twice", [](json &j) { j["binaries"][1]["chip"] = "sm_80"; }, "a second cubin for sm_80"},
      {"bytes zero", [](json &j) { j["binaries"][0]["bytes"] = 0; }, "'bytes' is 0, out of range"},
      {"bytes huge", [](json &j) { j["binaries"][0]["bytes"] = 1ll << 40; }, "out of range"},
      {"bytes string", [](json &j) { j["binaries"][0]["bytes"] = "12"; }, "must be an integer"},
      {"sha", [](json &j) { j["binaries"][0]["sha256"] = std::string(64, 'G'); },
       "binary 0 (sm_80): sha256 must be 64 lowercase hex digits"},
      {"target chips", [](json &j) { j["target"]["chips"] = {"sm_80", "x"}; },
       "manifest: target: chips[1] is not a chip name"},
  };
  for (const Hostile &c : cases) {
    json j = withBinaries({"sm_80", "sm_90a"});
    c.mutate(j);
    auto m = Manifest::parse(j.dump());
    ASSERT_FALSE(m.ok()) << c.name;
    EXPECT_EQ(m.error().code(), Error::Code::InvalidManifest) << c.name;
    EXPECT_NE(m.error().message().find(c.expect), std::string::npos)
        << c.name << ": expected '" << c.expect << "' in: " << m.error().message();
  }
}

TEST(RuntimeChips, LoadReadsTheCubinsAndChoosesPerGpu) {
  TempDir dir;
  json j = withBinaries({"sm_80", "sm_90a"});
  dir.write("mm_relu.json", j.dump());
  dir.write("mm_relu.ptx", kPtx);
  dir.write("mm_relu.sm_80.cubin", cubinFor("sm_80"));
  dir.write("mm_relu.sm_90a.cubin", cubinFor("sm_90a"));
  auto mod = Module::load(dir.path + "/mm_relu.json");
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  auto img = mod->imageFor(9, 0);
  ASSERT_TRUE(img.ok()) << img.error().message();
  EXPECT_TRUE(img->cubin);
  EXPECT_EQ(img->chip, "sm_90a");
  EXPECT_EQ(img->file, "mm_relu.sm_90a.cubin");
  img = mod->imageFor(8, 6); // an sm_80 cubin runs on sm_86
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(img->file, "mm_relu.sm_80.cubin");
  img = mod->imageFor(12, 0); // no cubin: the PTX, JIT-compiled
  ASSERT_TRUE(img.ok());
  EXPECT_FALSE(img->cubin);
  EXPECT_EQ(img->chip, "sm_80");
  EXPECT_EQ(img->file, "mm_relu.ptx");
  img = mod->imageFor(7, 5);
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.error().code(), Error::Code::Unsupported);
  EXPECT_EQ(img.error().message(),
            "evo-runtime: mm_relu: no kernel image runs on this GPU (sm_75): the cubins are for "
            "sm_80, sm_90a and the PTX is for sm_80 (needs sm_80 or newer)");

  // A cubin that changed, is missing or is a symbolic link is refused like the PTX.
  dir.write("mm_relu.sm_90a.cubin", cubinFor("sm_90a") + "x");
  auto r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), Error::Code::InvalidManifest);
  EXPECT_NE(r.error().message().find("the sm_90a cubin has 17 bytes, the manifest says 16"),
            std::string::npos)
      << r.error().message();
  std::string flipped = cubinFor("sm_90a");
  flipped.back() = 'b';
  dir.write("mm_relu.sm_90a.cubin", flipped);
  r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("the sm_90a cubin does not match the manifest"),
            std::string::npos)
      << r.error().message();
  ASSERT_EQ(unlink((dir.path + "/mm_relu.sm_90a.cubin").c_str()), 0);
  r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), Error::Code::Io);
  EXPECT_NE(r.error().message().find("mm_relu.sm_90a.cubin: No such file"), std::string::npos)
      << r.error().message();
  TempDir other;
  other.write("real.cubin", cubinFor("sm_90a"));
  ASSERT_EQ(symlink((other.path + "/real.cubin").c_str(),
                    (dir.path + "/mm_relu.sm_90a.cubin").c_str()),
            0);
  r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("symbolic link"), std::string::npos) << r.error().message();

  // One image given by the caller, or from memory: used on every GPU, cubins not read.
  auto given = Module::load(dir.path + "/mm_relu.json", {cubinFor("sm_90a")});
  ASSERT_TRUE(given.ok()) << given.error().message();
  img = given->imageFor(7, 5);
  ASSERT_TRUE(img.ok());
  EXPECT_FALSE(img->cubin);
  EXPECT_EQ(img->file, "");
  auto memory = Module::fromMemory(j.dump(), kPtx);
  ASSERT_TRUE(memory.ok());
  EXPECT_TRUE(memory->imageFor(7, 5).ok());
}
