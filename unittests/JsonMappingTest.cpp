//===- JsonMappingTest.cpp - llvm::json mappings of what crosses a process or the store -===//
//
// Each struct that travels as JSON (worker requests and events, the ceilings cache, the run
// store) has one toJSON/fromJSON pair: its JSON form is what the readers on the other side
// expect (keys unchanged), it survives a round trip, and an ill-typed or out-of-range field is
// refused with the path of the field.
//
//===----------------------------------------------------------------------===//

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Evaluation/Roofline.h"
#include "evo/Evaluation/Supervisor.h"
#include "evo/Evaluation/Verifier.h"
#include "evo/LLM/Backend.h"
#include "evo/LLM/Prompt.h"
#include "evo/Support/EnumNames.h"
#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace evo;
using evo::llm::splitCommand;
namespace json = llvm::json;

namespace {

/// Parses `text` as T; on failure returns the mapping's message.
template <typename T> llvm::Expected<T> parseAs(llvm::StringRef text) {
  return json::parse<T>(text);
}

template <typename T> std::string errorOf(llvm::StringRef text) {
  llvm::Expected<T> v = parseAs<T>(text);
  if (v)
    return "";
  return llvm::toString(v.takeError());
}

std::string print(const json::Value &v) { return llvm::formatv("{0}", v).str(); }

TEST(JsonMappingTest, KernelLaunchKeepsTheManifestForm) {
  KernelLaunch l;
  l.kernel = "mm_relu_k0";
  l.task = 2;
  l.grid = {16, 2, 1};
  l.block = {256, 1, 1};
  l.dynamicSharedMemory = 4096;
  l.args = {0, 1, 3};
  // The manifest's keys and spelling (docs/architecture.md), sorted by llvm::json.
  EXPECT_EQ(print(toJSON(l)),
            R"({"args":[0,1,3],"block":[256,1,1],"dynamic_shared_memory":4096,)"
            R"("grid":[16,2,1],"kernel":"mm_relu_k0","task":2})");
  llvm::Expected<KernelLaunch> back = parseAs<KernelLaunch>(print(toJSON(l)));
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->kernel, l.kernel);
  EXPECT_EQ(back->task, l.task);
  EXPECT_EQ(back->grid, l.grid);
  EXPECT_EQ(back->block, l.block);
  EXPECT_EQ(back->dynamicSharedMemory, l.dynamicSharedMemory);
  EXPECT_EQ(back->args, l.args);
}

TEST(JsonMappingTest, KernelLaunchReadsTheWorkerFormWithoutTask) {
  llvm::Expected<KernelLaunch> l = parseAs<KernelLaunch>(
      R"({"kernel":"k","grid":[1,2,3],"block":[32,1,1],"args":[]})");
  ASSERT_TRUE(static_cast<bool>(l)) << llvm::toString(l.takeError());
  EXPECT_EQ(l->task, 0u);
  EXPECT_EQ(l->dynamicSharedMemory, 0);
  EXPECT_EQ(l->grid, (std::array<int64_t, 3>{1, 2, 3}));
  EXPECT_TRUE(l->args.empty());
}

TEST(JsonMappingTest, KernelLaunchRefusesIllTypedFields) {
  const char *good = R"("grid":[1,1,1],"block":[32,1,1],"args":[0])";
  struct Case {
    std::string text, complaint;
  } cases[] = {
      {"[]", "expected object"},
      {std::string(R"({)") + good + "}", "kernel"},
      {std::string(R"({"kernel":7,)") + good + "}", "kernel"},
      {R"({"kernel":"k","grid":[1,1],"block":[32,1,1],"args":[0]})", "grid"},
      {R"({"kernel":"k","grid":[1,1,"1"],"block":[32,1,1],"args":[0]})", "grid"},
      {R"({"kernel":"k","grid":[1,0,1],"block":[32,1,1],"args":[0]})", "grid"},
      {R"({"kernel":"k","grid":[1,1,1],"block":[4294967296,1,1],"args":[0]})", "block"},
      {R"({"kernel":"k","grid":[1,1,1],"args":[0]})", "block"},
      {R"({"kernel":"k","grid":[1,1,1],"block":[32,1,1],"args":[-1]})", "args"},
      {R"({"kernel":"k","grid":[1,1,1],"block":[32,1,1],"args":[0.5]})", "args"},
      {R"({"kernel":"k","grid":[1,1,1],"block":[32,1,1]})", "args"},
      {std::string(R"({"kernel":"k","task":-2,)") + good + "}", "task"},
      {std::string(R"({"kernel":"k","dynamic_shared_memory":"big",)") + good + "}",
       "dynamic_shared_memory"},
  };
  for (const Case &c : cases) {
    std::string err = errorOf<KernelLaunch>(c.text);
    EXPECT_NE(err, "") << c.text;
    EXPECT_NE(err.find(c.complaint), std::string::npos) << c.text << ": " << err;
  }
}

TEST(JsonMappingTest, VariantScratchRoundTripAndRejection) {
  VariantScratch s{"acc", "f32", 1024, true};
  EXPECT_EQ(print(toJSON(s)),
            R"({"elements":1024,"kind":"f32","name":"acc","zero_init":true})");
  llvm::Expected<VariantScratch> back = parseAs<VariantScratch>(print(toJSON(s)));
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->name, "acc");
  EXPECT_EQ(back->kind, "f32");
  EXPECT_EQ(back->elements, 1024u);
  EXPECT_TRUE(back->zeroInit);
  EXPECT_NE(errorOf<VariantScratch>(R"({"kind":"f7","elements":1})").find("kind"),
            std::string::npos);
  EXPECT_NE(errorOf<VariantScratch>(R"({"kind":"f32","elements":-1})").find("elements"),
            std::string::npos);
  EXPECT_NE(errorOf<VariantScratch>(R"({"kind":"f32","elements":1,"zero_init":1})")
                .find("zero_init"),
            std::string::npos);
}

TEST(JsonMappingTest, VariantScratchTensorMapRoundTripAndRejection) {
  VariantScratch s;
  s.name = "tmap0";
  s.tensorMap = TensorMapDesc{3, {512, 256}, {1024}, {64, 128}, 128};
  s.tensorMapElementType = "f16";
  EXPECT_EQ(print(toJSON(s)),
            R"({"bytes":128,"name":"tmap0","role":"tensor_map","tensor_map":{"box":[64,128],)"
            R"("dims":[512,256],"element_type":"f16","source":3,"strides":[1024],"swizzle":128}})");
  llvm::Expected<VariantScratch> back = parseAs<VariantScratch>(print(toJSON(s)));
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->name, "tmap0");
  ASSERT_TRUE(back->tensorMap);
  EXPECT_EQ(back->tensorMap->source, 3u);
  EXPECT_EQ(back->tensorMap->dims, s.tensorMap->dims);
  EXPECT_EQ(back->tensorMap->strides, s.tensorMap->strides);
  EXPECT_EQ(back->tensorMap->box, s.tensorMap->box);
  EXPECT_EQ(back->tensorMap->swizzle, 128);
  EXPECT_EQ(back->tensorMapElementType, "f16");
  // Plain scratch stays plain.
  llvm::Expected<VariantScratch> plain =
      parseAs<VariantScratch>(R"({"role":"scratch","kind":"f32","elements":4})");
  ASSERT_TRUE(static_cast<bool>(plain)) << llvm::toString(plain.takeError());
  EXPECT_FALSE(plain->tensorMap);
  struct Case {
    const char *text, *complaint;
  } cases[] = {
      {R"({"role":"tensor_map"})", "tensor_map"},
      {R"({"role":"weights","kind":"f32","elements":4})", "role"},
      {R"({"role":"tensor_map","tensor_map":{"source":0,"element_type":"f8","dims":[8],)"
       R"("strides":[],"box":[8]}})",
       "element_type"},
      {R"({"role":"tensor_map","tensor_map":{"source":0,"element_type":"f16","dims":[8,8],)"
       R"("strides":[8],"box":[8,8]}})",
       "cuTensorMapEncodeTiled"},
      {R"({"role":"tensor_map","tensor_map":{"source":0,"element_type":"f16","dims":[8],)"
       R"("strides":[],"box":[8],"swizzle":48}})",
       "cuTensorMapEncodeTiled"},
      {R"({"role":"tensor_map","tensor_map":{"source":4294967296,"element_type":"f16",)"
       R"("dims":[8],"strides":[],"box":[8]}})",
       "source"},
  };
  for (const Case &c : cases) {
    std::string err = errorOf<VariantScratch>(c.text);
    EXPECT_NE(err, "") << c.text;
    EXPECT_NE(err.find(c.complaint), std::string::npos) << c.text << ": " << err;
  }
}

TEST(JsonMappingTest, VerdictSpellings) {
  for (Verdict v :
       {Verdict::Valid, Verdict::Invalid, Verdict::Crashed, Verdict::Timeout, Verdict::NotRun}) {
    EXPECT_EQ(symbolizeVerdict(stringifyVerdict(v)), v);
    llvm::Expected<Verdict> back = parseAs<Verdict>(print(toJSON(v)));
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(*back, v);
  }
  EXPECT_EQ(stringifyVerdict(Verdict::NotRun), "not-run");
  // The dialect's spellings are the worker protocol's.
  EXPECT_EQ(stringifyVerdict(Verdict::Valid), protocol::kVerdictValid);
  EXPECT_EQ(stringifyVerdict(Verdict::Invalid), protocol::kVerdictInvalid);
  EXPECT_FALSE(symbolizeVerdict("Valid"));
  EXPECT_NE(errorOf<Verdict>("\"ok\""), "");
  EXPECT_NE(errorOf<Verdict>("1"), "");
}

TEST(JsonMappingTest, WorkerResultEvents) {
  llvm::Expected<CandidateOutcome> o = parseAs<CandidateOutcome>(
      R"({"event":"result","candidate":0,"id":"v1","verdict":"valid","timing":{"median_ms":1}})");
  ASSERT_TRUE(static_cast<bool>(o)) << llvm::toString(o.takeError());
  EXPECT_EQ(o->id, "v1");
  EXPECT_EQ(o->verdict, Verdict::Valid);
  EXPECT_EQ(o->reason, "");
  EXPECT_TRUE(o->result.getObject("timing"));
  // The parent's verdicts are never the worker's to give; ids and reasons are strings.
  EXPECT_NE(errorOf<CandidateOutcome>(R"({"id":"v","verdict":"crashed"})"), "");
  EXPECT_NE(errorOf<CandidateOutcome>(R"({"id":"v"})"), "");
  EXPECT_NE(errorOf<CandidateOutcome>(R"({"id":3,"verdict":"valid"})"), "");
  EXPECT_NE(errorOf<CandidateOutcome>(R"({"id":"v","verdict":"invalid","reason":[]})"), "");
}

TEST(JsonMappingTest, CeilingsRoundTripAndRejection) {
  Ceilings c;
  c.device = "NVIDIA H200";
  c.uuid = "GPU-1";
  c.copyGBps = 4282;
  c.readGBps = 4430;
  c.writeGBps = 4000;
  c.l2Bytes = 50e6;
  c.fp32TFlops = 50.9;
  c.f16MmaTFlops = 600;
  c.f16WgmmaTFlops = 910;
  c.bf16WgmmaTFlops = 905;
  c.wgmmaStatus = "measured";
  llvm::Expected<Ceilings> back = parseAs<Ceilings>(print(toJSON(c)));
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->device, c.device);
  EXPECT_EQ(back->uuid, c.uuid);
  EXPECT_DOUBLE_EQ(back->copyGBps, c.copyGBps);
  EXPECT_DOUBLE_EQ(back->readGBps, c.readGBps);
  EXPECT_DOUBLE_EQ(back->writeGBps, c.writeGBps);
  EXPECT_DOUBLE_EQ(back->l2Bytes, c.l2Bytes);
  EXPECT_DOUBLE_EQ(back->fp32TFlops, c.fp32TFlops);
  EXPECT_DOUBLE_EQ(back->f16MmaTFlops, c.f16MmaTFlops);
  EXPECT_DOUBLE_EQ(back->f16WgmmaTFlops, c.f16WgmmaTFlops);
  EXPECT_DOUBLE_EQ(back->bf16WgmmaTFlops, c.bf16WgmmaTFlops);
  EXPECT_EQ(back->wgmmaStatus, c.wgmmaStatus);
  // The worker's event carries only some keys: the others are left as they were.
  Ceilings partial;
  partial.l2Bytes = 7;
  json::Path::Root root;
  ASSERT_TRUE(fromJSON(json::Object{{"event", "ceilings"}, {"copy_gbps", 1.5}}, partial, root));
  EXPECT_DOUBLE_EQ(partial.copyGBps, 1.5);
  EXPECT_DOUBLE_EQ(partial.l2Bytes, 7);
  EXPECT_NE(errorOf<Ceilings>(R"({"copy_gbps":"fast"})").find("copy_gbps"), std::string::npos);
  EXPECT_NE(errorOf<Ceilings>(R"({"uuid":1})").find("uuid"), std::string::npos);
  EXPECT_NE(errorOf<Ceilings>(R"({"f16_wgmma_tflops":"fast"})").find("f16_wgmma_tflops"),
            std::string::npos);
  EXPECT_NE(errorOf<Ceilings>(R"({"wgmma_status":0})").find("wgmma_status"), std::string::npos);
}

TEST(JsonMappingTest, LLMUsageKeepsTheCacheForm) {
  llm::Usage u{120, 30, 0.25, true};
  EXPECT_EQ(print(toJSON(u)),
            R"({"completion_tokens":30,"cost":0.25,"prompt_tokens":120,"reported":true})");
  llvm::Expected<llm::Usage> back = parseAs<llm::Usage>(print(toJSON(u)));
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->promptTokens, 120);
  EXPECT_EQ(back->completionTokens, 30);
  EXPECT_DOUBLE_EQ(back->cost, 0.25);
  EXPECT_TRUE(back->reported);
  // A mailbox sidecar's usage: no "reported", extra keys.
  llvm::Expected<llm::Usage> side =
      parseAs<llm::Usage>(R"({"prompt_tokens":5,"completion_tokens":6,"cost":0,"model":"m"})");
  ASSERT_TRUE(static_cast<bool>(side)) << llvm::toString(side.takeError());
  EXPECT_EQ(side->completionTokens, 6);
  EXPECT_FALSE(side->reported);
  EXPECT_NE(errorOf<llm::Usage>(R"({"prompt_tokens":"5"})").find("prompt_tokens"),
            std::string::npos);
  EXPECT_NE(errorOf<llm::Usage>(R"({"prompt_tokens":1.5})").find("prompt_tokens"),
            std::string::npos);
  EXPECT_NE(errorOf<llm::Usage>(R"({"reported":"yes"})").find("reported"), std::string::npos);
}

TEST(JsonMappingTest, PromptContextRoundTripAndRejection) {
  llm::PromptContext c;
  c.taskName = "relu_t0";
  c.family = "elementwise";
  c.currentKernel = "gpu.module @k {}";
  c.currentMs = 0.5;
  c.solutions = {{7, "gpu.module @a {}", 0.25, "vectorized"}, {8, "gpu.module @b {}", NAN, ""}};
  c.thoughts = {"t1"};
  c.failures = {"f1", "f2"};
  json::Value v = toJSON(c);
  const json::Object *o = v.getAsObject();
  ASSERT_TRUE(o);
  EXPECT_EQ(o->get("baseline_ms")->kind(), json::Value::Null); // NaN is stored as null
  EXPECT_EQ(print(*(*o->getArray("solutions"))[1].getAsObject()->get("ms")), "null");
  llvm::Expected<llm::PromptContext> back = llm::PromptContext::fromJson(v);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->taskName, c.taskName);
  EXPECT_EQ(back->family, c.family);
  EXPECT_EQ(back->currentKernel, c.currentKernel);
  EXPECT_DOUBLE_EQ(back->currentMs, 0.5);
  EXPECT_TRUE(std::isnan(back->baselineMs));
  ASSERT_EQ(back->solutions.size(), 2u);
  EXPECT_EQ(back->solutions[0].id, 7);
  EXPECT_EQ(back->solutions[0].thought, "vectorized");
  EXPECT_TRUE(std::isnan(back->solutions[1].ms));
  EXPECT_EQ(back->thoughts, c.thoughts);
  EXPECT_EQ(back->failures, c.failures);
  EXPECT_EQ(print(toJSON(*back)), print(v));
  // Every key is optional; a present one has its type.
  llvm::Expected<llm::PromptContext> empty = llm::PromptContext::fromJson(json::Object{});
  ASSERT_TRUE(static_cast<bool>(empty)) << llvm::toString(empty.takeError());
  EXPECT_TRUE(std::isnan(empty->currentMs));
  for (const char *bad : {R"({"current_ms":"fast"})", R"({"solutions":[3]})",
                          R"({"solutions":[{"id":"7"}]})", R"({"thoughts":"one"})",
                          R"({"task_name":1})"}) {
    llvm::Expected<json::Value> parsed = json::parse(bad);
    ASSERT_TRUE(static_cast<bool>(parsed));
    llvm::Expected<llm::PromptContext> r = llm::PromptContext::fromJson(*parsed);
    EXPECT_FALSE(static_cast<bool>(r)) << bad;
    if (!r)
      llvm::consumeError(r.takeError());
  }
  llvm::Expected<llm::PromptContext> notObject = llm::PromptContext::fromJson(json::Array{});
  ASSERT_FALSE(static_cast<bool>(notObject));
  EXPECT_EQ(llvm::toString(notObject.takeError()), "a prompt context must be a JSON object");
}

enum class Color { Red, Green, Blue };
constexpr EnumName<Color> kColors[] = {{Color::Red, "red"}, {Color::Green, "green"}};

TEST(JsonMappingTest, EnumNameTables) {
  EXPECT_EQ(enumToName(kColors, Color::Green), "green");
  EXPECT_EQ(enumToName(kColors, Color::Blue), "");
  EXPECT_EQ(enumToName(kColors, Color::Blue, "none"), "none");
  EXPECT_EQ(enumFromName(kColors, "red"), Color::Red);
  EXPECT_FALSE(enumFromName(kColors, "Red"));
  EXPECT_FALSE(enumFromName(kColors, ""));
}

TEST(JsonMappingTest, CommandSplittingFollowsGnuRules) {
  llvm::Expected<std::vector<std::string>> v =
      splitCommand("llm -m 'gpt 4' \"a b\"\tc d\\ e 'it''s' \"q\\\"q\"");
  ASSERT_TRUE(static_cast<bool>(v)) << llvm::toString(v.takeError());
  EXPECT_EQ(*v, (std::vector<std::string>{"llm", "-m", "gpt 4", "a b", "c", "d e", "its", "q\"q"}));
  for (const char *bad : {"llm 'open", "llm \"open", "llm \"esc\\\"", "", "  \t "}) {
    llvm::Expected<std::vector<std::string>> r = splitCommand(bad);
    EXPECT_FALSE(static_cast<bool>(r)) << bad;
    if (!r)
      llvm::consumeError(r.takeError());
  }
}

} // namespace
