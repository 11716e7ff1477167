//===- TuningDBTest.cpp - task signatures and the tuning database ------------===//

#include "evo/Conversion/LowerToGPU.h"
#include "evo/Conversion/TuningDB.h"
#include "evo/Dialect/Evo/IR/EvoDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ScratchDir.h"
#include "gtest/gtest.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using namespace evo;
namespace json = llvm::json;

namespace {
class TuningDBTest : public ::testing::Test {
protected:
  TuningDBTest() { loadLoweringDialects(&ctx); }

  /// The signature of the first function of `src`.
  TaskSignature sig(StringRef src) {
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
    EXPECT_TRUE(m) << src.str();
    if (!m)
      return {};
    return taskSignature(*m->getOps<func::FuncOp>().begin());
  }

  /// A matmul task with the given names, shapes and element type.
  static std::string matmul(StringRef fn, StringRef a, StringRef w, int64_t m, int64_t k,
                            int64_t n, StringRef elt = "f32", StringRef extra = "") {
    return llvm::formatv(R"(
func.func {8}@{0}(%{1}: tensor<{3}x{4}x{6}>{7}, %{2}: tensor<{4}x{5}x{6}>) -> tensor<{3}x{5}x{6}> {
  %zero_{0} = arith.constant 0.0 : {6}
  %empty = tensor.empty() : tensor<{3}x{5}x{6}>
  %init_{1} = linalg.fill ins(%zero_{0} : {6}) outs(%empty : tensor<{3}x{5}x{6}>) -> tensor<{3}x{5}x{6}>
  %r = linalg.matmul {9} ins(%{1}, %{2} : tensor<{3}x{4}x{6}>, tensor<{4}x{5}x{6}>) outs(%init_{1} : tensor<{3}x{5}x{6}>) -> tensor<{3}x{5}x{6}>
  return %r : tensor<{3}x{5}x{6}>
})",
                         fn, a, w, m, k, n, elt, extra.empty() ? "" : " {evo.range = [0.0, 1.0]}",
                         extra.empty() ? "" : "private ",
                         extra.empty() ? "" : "{evo.knobs = {tile_sizes = [64, 64, 8]}}")
        .str();
  }

  static TuningRecord record(StringRef signature, StringRef chip, double bestMs,
                             StringRef measuredAt, int64_t blockSize = 128) {
    TuningRecord r;
    r.signature = signature.str();
    r.chip = chip.str();
    r.family = TaskFamily::Reduction;
    r.knobsJson = json::Object{{"block_size", blockSize}, {"reduction", "warp"}};
    EXPECT_TRUE(succeeded(r.knobs.mergeJson(r.knobsJson, nullptr)));
    r.bestMs = bestMs;
    r.baselineMs = 2 * bestMs;
    r.measuredAt = measuredAt.str();
    return r;
  }

  std::string tempDir() { return evo::test::scratchDir("evo-tuning-db"); }
  static void writeFile(StringRef path, StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << text;
  }

  MLIRContext ctx;
};

const char *kSig1 = "1111111111111111111111111111111111111111111111111111111111111111";
const char *kSig2 = "2222222222222222222222222222222222222222222222222222222222222222";
} // namespace

TEST_F(TuningDBTest, SignatureIgnoresNamesOfTheFunctionAndItsValues) {
  TaskSignature a = sig(matmul("model_t3", "x", "w", 64, 128, 32));
  TaskSignature b = sig(matmul("other", "input", "weight", 64, 128, 32));
  EXPECT_EQ(a.hash.size(), 64u);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.canonical, b.canonical);
  EXPECT_NE(a.canonical.find("@task"), std::string::npos);
  EXPECT_EQ(a.canonical.find("model_t3"), std::string::npos);
  EXPECT_EQ(a.ops, "linalg.matmul");
  EXPECT_EQ(a.type, "(tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>");
}

TEST_F(TuningDBTest, SignatureIgnoresKnobsVisibilityAndArgumentAttributes) {
  // evo.knobs choose a schedule, not what is computed; argument attributes (evo.range) and the
  // visibility are not part of the computation either.
  EXPECT_EQ(sig(matmul("f", "x", "w", 64, 128, 32)).hash,
            sig(matmul("f", "x", "w", 64, 128, 32, "f32", "extra")).hash);
}

TEST_F(TuningDBTest, SignatureChangesWithShapesDtypesAndOps) {
  std::string base = sig(matmul("f", "x", "w", 64, 128, 32)).hash;
  EXPECT_NE(base, sig(matmul("f", "x", "w", 64, 256, 32)).hash);
  EXPECT_NE(base, sig(matmul("f", "x", "w", 32, 128, 32)).hash);
  EXPECT_NE(base, sig(matmul("f", "x", "w", 64, 128, 32, "f16")).hash);
  // Another payload over the same shapes.
  auto ew = [](StringRef op) {
    return R"(
func.func @f(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = )" + op.str() + R"( %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
})";
  };
  EXPECT_NE(sig(ew("arith.addf")).hash, sig(ew("arith.mulf")).hash);
  EXPECT_EQ(sig(ew("arith.addf")).hash, sig(ew("arith.addf")).hash);
}

TEST_F(TuningDBTest, RoundTripsThroughJson) {
  TuningDb db;
  EXPECT_TRUE(db.add(record(kSig1, "sm_90", 1.5, "2026-12-01T10:00:00.000Z"), TuningDb::Prefer::Fastest));
  EXPECT_TRUE(db.add(record(kSig1, "sm_80", 2.5, "2026-12-01T10:00:00.000Z"), TuningDb::Prefer::Fastest));
  std::string text = llvm::formatv("{0:2}", db.toJson()).str();
  TuningDbError e;
  std::optional<TuningDb> back = TuningDb::parse(text, e);
  ASSERT_TRUE(back) << e.message;
  ASSERT_EQ(back->records().size(), 2u);
  const TuningRecord *r = back->lookup(kSig1, "sm_90");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->knobs.blockSize, 128);
  EXPECT_EQ(r->knobs.reduction, ReductionStrategy::Warp);
  EXPECT_DOUBLE_EQ(r->bestMs, 1.5);
  EXPECT_DOUBLE_EQ(r->speedup(), 2.0);
  EXPECT_FALSE(back->lookup(kSig2, "sm_90"));
  EXPECT_EQ(back->otherChips(kSig1, "sm_90").size(), 1u);
}

TEST_F(TuningDBTest, MergeKeepsTheFastestOrTheNewest) {
  TuningDb fastest, newest;
  for (TuningDb *db : {&fastest, &newest}) {
    TuningDb::Prefer p = db == &fastest ? TuningDb::Prefer::Fastest : TuningDb::Prefer::Newest;
    db->add(record(kSig1, "sm_90", 1.0, "2026-11-01T00:00:00.000Z", 64), p);
    db->add(record(kSig1, "sm_90", 2.0, "2026-12-01T00:00:00.000Z", 512), p);
  }
  ASSERT_EQ(fastest.records().size(), 1u);
  EXPECT_EQ(fastest.lookup(kSig1, "sm_90")->knobs.blockSize, 64);
  EXPECT_EQ(newest.lookup(kSig1, "sm_90")->knobs.blockSize, 512);
  // A record without a time never beats a timed one.
  TuningRecord untimed = record(kSig1, "sm_90", 1.0, "2027-01-01T00:00:00.000Z", 1024);
  untimed.bestMs = NAN;
  EXPECT_FALSE(fastest.add(untimed, TuningDb::Prefer::Fastest));
}

TEST_F(TuningDBTest, MalformedDatabasesAreRefusedWithWhere) {
  auto refuse = [&](StringRef text, StringRef expected, unsigned line = 0) {
    TuningDbError e;
    EXPECT_FALSE(TuningDb::parse(text, e)) << text.str();
    EXPECT_NE(e.message.find(expected.str()), std::string::npos)
        << e.message << "\n  expected: " << expected.str();
    if (line)
      EXPECT_EQ(e.line, line) << e.message;
  };
  refuse("{\"format\": \"evo-tuning-db/1\",\n \"records\": [,]}", "not JSON", 2);
  refuse("[]", "top level is not an object");
  // Deep nesting is refused before the (recursive) JSON parser sees it.
  refuse(std::string(1000000, '[') + std::string(1000000, ']'), "nested more than 64 levels", 1);
  refuse("{\"format\": \"[[[[\", \"records\": []}", "'format' must be"); // brackets in strings
  refuse("{\"format\": \"other\", \"records\": []}", "'format' must be");
  refuse("{\"format\": \"evo-tuning-db/1\"}", "'records' is missing");
  std::string good = llvm::formatv("{0}", json::Value(record(kSig1, "sm_90", 1, "x").toJson())).str();
  auto db = [&](StringRef rec) {
    return "{\"format\": \"evo-tuning-db/1\", \"records\": [\n" + good + ",\n" + rec.str() + "\n]}";
  };
  auto with = [&](StringRef key, json::Value v) {
    json::Object o = record(kSig2, "sm_90", 1, "x").toJson();
    o[key] = std::move(v);
    return db(llvm::formatv("{0}", json::Value(std::move(o))).str());
  };
  refuse(db("3"), "records[1]: not an object", 3);
  {
    TuningDbError e;
    EXPECT_FALSE(TuningDb::parse(db("  {\"x\": 1}"), e));
    EXPECT_EQ(e.line, 3u);
    EXPECT_EQ(e.column, 3u) << e.message;
  }
  refuse(with("signature", "abc"), "records[1]: signature: must be 64", 3);
  refuse(with("signature", 5), "signature: not a string");
  refuse(with("chip", "sm_x"), "chip: 'sm_x' is not a chip name");
  refuse(with("family", "convolution"), "family: 'convolution' is not a task family");
  refuse(with("kind", "binary"), "kind: must be");
  refuse(with("knobs", "fast"), "knobs: missing or not an object");
  // Every knob through the lowering's own checks.
  refuse(with("knobs", json::Object{{"block_size", 7}}), "knobs:");
  refuse(with("knobs", json::Object{{"block_size", 1ll << 40}}), "knobs:");
  refuse(with("knobs", json::Object{{"bogus", 1}}), "knobs:");
  refuse(with("knobs", json::Object{{"tile_sizes", json::Array{1, 2, 3, 4, 5, 6}}}), "knobs:");
  refuse(with("knobs", json::Object{{"reduction", "sideways"}}), "knobs:");
  refuse(with("knobs", json::Object{{"tile_sizes", json::Array{128, 128, 64}}, {"wgmma", 1}}),
         "knobs: wgmma needs chip sm_90a, the record is for sm_90");
  {
    // mma.sync exists from sm_80 on: a record for sm_75 is refused, one for sm_90 kept.
    json::Object o = record(kSig2, "sm_75", 1, "x").toJson();
    o["knobs"] = json::Object{{"tile_sizes", json::Array{128, 128, 32}}, {"mma_sync", 1}};
    refuse(db(llvm::formatv("{0}", json::Value(std::move(o))).str()),
           "knobs: mma_sync needs chip sm_80 or newer, the record is for sm_75");
    TuningDbError e;
    EXPECT_TRUE(TuningDb::parse(
        with("knobs", json::Object{{"tile_sizes", json::Array{128, 128, 32}}, {"mma_sync", 1}}), e))
        << e.message;
  }
  refuse(with("best_ms", -1), "best_ms: not a positive number");
  refuse(with("best_ms", "fast"), "best_ms: not a positive number");
  refuse(with("run", 3), "run: not an object");
  refuse(db(good), "a second record for signature " + std::string(kSig1), 3);
}

TEST_F(TuningDBTest, LoadReadsOnlyRegularFilesOfBoundedSize) {
  std::string dir = tempDir();
  TuningDbError e;
  EXPECT_FALSE(TuningDb::load(dir + "/missing.json", e));
  EXPECT_NE(e.message.find("cannot open"), std::string::npos) << e.message;
  EXPECT_FALSE(TuningDb::load(dir, e));
  EXPECT_EQ(e.message, "not a regular file");
  // A FIFO is refused without waiting for a writer.
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(TuningDb::load(fifo, e));
  EXPECT_EQ(e.message, "not a regular file");
  EXPECT_FALSE(TuningDb::load("/dev/zero", e));
  EXPECT_EQ(e.message, "not a regular file");
  // Too big (sparse: nothing is written or read).
  std::string big = dir + "/big.json";
  int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, kMaxTuningDbBytes + 1), 0);
  ::close(fd);
  EXPECT_FALSE(TuningDb::load(big, e));
  EXPECT_NE(e.message.find("larger than the 64 MiB"), std::string::npos) << e.message;

  TuningDb db;
  db.add(record(kSig1, "sm_90", 1, "x"), TuningDb::Prefer::Fastest);
  std::string good = dir + "/db.json";
  ASSERT_FALSE(bool(db.write(good)));
  std::optional<TuningDb> back = TuningDb::load(good, e);
  ASSERT_TRUE(back) << e.message;
  EXPECT_EQ(back->records().size(), 1u);
}

TEST_F(TuningDBTest, AddToDatabaseMergesAndNeverOverwritesABadFile) {
  std::string dir = tempDir();
  std::string path = dir + "/new/all.json"; // its directory is created
  TuningDb a, b;
  a.add(record(kSig1, "sm_90", 2.0, "2026-11-01T00:00:00.000Z", 64), TuningDb::Prefer::Fastest);
  b.add(record(kSig1, "sm_90", 1.0, "2026-12-01T00:00:00.000Z", 512), TuningDb::Prefer::Fastest);
  b.add(record(kSig2, "sm_90", 1.0, "2026-12-01T00:00:00.000Z"), TuningDb::Prefer::Fastest);
  ASSERT_FALSE(bool(addToTuningDb(path, a, TuningDb::Prefer::Fastest)));
  ASSERT_FALSE(bool(addToTuningDb(path, b, TuningDb::Prefer::Fastest)));
  TuningDbError e;
  std::optional<TuningDb> merged = TuningDb::load(path, e);
  ASSERT_TRUE(merged) << e.message;
  EXPECT_EQ(merged->records().size(), 2u);
  EXPECT_EQ(merged->lookup(kSig1, "sm_90")->knobs.blockSize, 512);
  // Nothing but the database is left in the directory (no temporary, no lock file).
  std::error_code ec;
  unsigned entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir + "/new", ec), end; it != end && !ec;
       it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 1u);

  std::string bad = dir + "/bad.json";
  writeFile(bad, "{\"format\": \"evo-tuning-db/1\", \"records\": [1]}");
  llvm::Error err = addToTuningDb(bad, a, TuningDb::Prefer::Fastest);
  ASSERT_TRUE(bool(err));
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("bad.json:1:43: records[0]: not an object"), std::string::npos) << msg;
  auto buf = llvm::MemoryBuffer::getFile(bad);
  ASSERT_TRUE(bool(buf));
  EXPECT_EQ((*buf)->getBuffer(), "{\"format\": \"evo-tuning-db/1\", \"records\": [1]}");
}
