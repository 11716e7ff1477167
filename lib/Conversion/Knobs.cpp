//===- Knobs.cpp - schedule knobs -------------------------------------------===//

#include "evo/Conversion/Knobs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace evo {

StringRef stringifyTaskFamily(TaskFamily family) {
  switch (family) {
  case TaskFamily::Elementwise:
    return "elementwise";
  case TaskFamily::Reduction:
    return "reduction";
  case TaskFamily::Softmax:
    return "softmax";
  case TaskFamily::Matmul:
    return "matmul";
  case TaskFamily::Rows:
    return "rows";
  }
  llvm_unreachable("unknown family");
}

std::optional<TaskFamily> symbolizeTaskFamily(StringRef name) {
  return llvm::StringSwitch<std::optional<TaskFamily>>(name)
      .Case("elementwise", TaskFamily::Elementwise)
      .Case("reduction", TaskFamily::Reduction)
      .Case("softmax", TaskFamily::Softmax)
      .Case("matmul", TaskFamily::Matmul)
      .Case("rows", TaskFamily::Rows)
      .Default(std::nullopt);
}

StringRef stringifyReductionStrategy(ReductionStrategy strategy) {
  switch (strategy) {
  case ReductionStrategy::Thread:
    return "thread";
  case ReductionStrategy::Warp:
    return "warp";
  case ReductionStrategy::Block:
    return "block";
  }
  llvm_unreachable("unknown strategy");
}

std::optional<ReductionStrategy> symbolizeReductionStrategy(StringRef name) {
  return llvm::StringSwitch<std::optional<ReductionStrategy>>(name)
      .Case("thread", ReductionStrategy::Thread)
      .Case("warp", ReductionStrategy::Warp)
      .Case("block", ReductionStrategy::Block)
      .Default(std::nullopt);
}

ArrayRef<StringRef> knownKnobNames() {
  static const StringRef names[] = {"block_size",   "elements_per_thread", "vector_width",
                                    "reduction",    "accumulators",        "tile_sizes",
                                    "thread_tile",  "cache_row",           "split",
                                    "transpose_tile", "prefetch"};
  return names;
}

static bool isPowerOf2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

LogicalResult ScheduleKnobs::verify(function_ref<InFlightDiagnostic()> emitError) const {
  if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0)
    return emitError() << "block_size must be a multiple of 32 in [32, 1024], got " << blockSize;
  if (elementsPerThread < 1 || elementsPerThread > 16)
    return emitError() << "elements_per_thread must be in [1, 16], got " << elementsPerThread;
  if (!isPowerOf2(vectorWidth) || vectorWidth > 8)
    return emitError() << "vector_width must be 1, 2, 4 or 8, got " << vectorWidth;
  if (!isPowerOf2(accumulators) || accumulators > 8)
    return emitError() << "accumulators must be 1, 2, 4 or 8, got " << accumulators;
  if (transposeTile != 0 && transposeTile != 16 && transposeTile != 32 && transposeTile != 64)
    return emitError() << "transpose_tile must be 0 (off), 16, 32 or 64, got " << transposeTile;
  if (!isPowerOf2(split) || split > 256)
    return emitError() << "split must be a power of 2 in [1, 256], got " << split;
  if (!tileSizes.empty()) {
    if (tileSizes.size() != 3)
      return emitError() << "tile_sizes must have 3 entries (M, N, K), got " << tileSizes.size();
    for (int64_t t : tileSizes)
      if (t < 1 || t > 512)
        return emitError() << "tile_sizes entries must be in [1, 512], got " << t;
  }
  if (threadTile.size() != 2)
    return emitError() << "thread_tile must have 2 entries (M, N), got " << threadTile.size();
  for (int64_t t : threadTile)
    if (t < 1 || t > 16)
      return emitError() << "thread_tile entries must be in [1, 16], got " << t;
  return success();
}

static FailureOr<int64_t> getInt(NamedAttribute entry,
                                 function_ref<InFlightDiagnostic()> emitError) {
  if (auto i = dyn_cast<IntegerAttr>(entry.getValue()))
    return i.getInt();
  return emitError() << "knob '" << entry.getName().getValue() << "' must be an integer";
}

static LogicalResult getIntList(NamedAttribute entry, SmallVectorImpl<int64_t> &out,
                                function_ref<InFlightDiagnostic()> emitError) {
  out.clear();
  if (auto dense = dyn_cast<DenseI64ArrayAttr>(entry.getValue())) {
    llvm::append_range(out, dense.asArrayRef());
    return success();
  }
  if (auto array = dyn_cast<ArrayAttr>(entry.getValue())) {
    for (Attribute a : array) {
      auto i = dyn_cast<IntegerAttr>(a);
      if (!i)
        return emitError() << "knob '" << entry.getName().getValue()
                           << "' must be a list of integers";
      out.push_back(i.getInt());
    }
    return success();
  }
  return emitError() << "knob '" << entry.getName().getValue()
                     << "' must be a list of integers";
}

LogicalResult ScheduleKnobs::merge(DictionaryAttr dict,
                                   function_ref<InFlightDiagnostic()> emitError) {
  if (!dict)
    return success();
  for (NamedAttribute entry : dict) {
    StringRef key = entry.getName().getValue();
    if (key == "block_size" || key == "elements_per_thread" || key == "vector_width" ||
        key == "accumulators" || key == "split" || key == "transpose_tile") {
      FailureOr<int64_t> v = getInt(entry, emitError);
      if (failed(v))
        return failure();
      int64_t &slot = key == "block_size"            ? blockSize
                      : key == "elements_per_thread" ? elementsPerThread
                      : key == "vector_width"        ? vectorWidth
                      : key == "split"               ? split
                      : key == "transpose_tile"      ? transposeTile
                                                     : accumulators;
      slot = *v;
    } else if (key == "reduction") {
      auto s = dyn_cast<StringAttr>(entry.getValue());
      std::optional<ReductionStrategy> strategy =
          s ? symbolizeReductionStrategy(s.getValue()) : std::nullopt;
      if (!strategy)
        return emitError() << "knob 'reduction' must be \"thread\", \"warp\" or \"block\"";
      reduction = *strategy;
    } else if (key == "cache_row" || key == "prefetch") {
      FailureOr<int64_t> v = getInt(entry, emitError);
      if (failed(v))
        return failure();
      if (*v != 0 && *v != 1)
        return emitError() << "knob '" << key << "' must be 0 or 1";
      (key == "cache_row" ? cacheRow : prefetch) = *v;
    } else if (key == "tile_sizes") {
      if (failed(getIntList(entry, tileSizes, emitError)))
        return failure();
    } else if (key == "thread_tile") {
      if (failed(getIntList(entry, threadTile, emitError)))
        return failure();
    } else {
      return emitError() << "unknown knob '" << key << "' (known: "
                         << llvm::join(knownKnobNames(), ", ") << ")";
    }
  }
  return verify(emitError);
}

llvm::json::Object ScheduleKnobs::toJson(TaskFamily family) const {
  llvm::json::Object o;
  auto list = [](ArrayRef<int64_t> v) {
    return llvm::json::Array(llvm::map_range(v, [](int64_t x) { return llvm::json::Value(x); }));
  };
  switch (family) {
  case TaskFamily::Elementwise:
    o["block_size"] = blockSize;
    o["elements_per_thread"] = elementsPerThread;
    o["vector_width"] = vectorWidth;
    o["transpose_tile"] = transposeTile;
    break;
  case TaskFamily::Reduction:
  case TaskFamily::Softmax:
    o["block_size"] = blockSize;
    o["reduction"] = stringifyReductionStrategy(reduction);
    o["vector_width"] = vectorWidth;
    if (family == TaskFamily::Reduction) {
      o["accumulators"] = accumulators;
      o["split"] = split;
    }
    break;
  case TaskFamily::Rows:
    o["block_size"] = blockSize;
    o["reduction"] = stringifyReductionStrategy(reduction);
    o["vector_width"] = vectorWidth;
    o["cache_row"] = static_cast<int64_t>(cacheRow);
    break;
  case TaskFamily::Matmul:
    if (tileSizes.empty()) {
      // Naive: the reduction emitter's one-thread-per-output schedule.
      o["block_size"] = blockSize;
      o["accumulators"] = accumulators;
    } else {
      o["tile_sizes"] = list(tileSizes);
      o["thread_tile"] = list(threadTile);
      if (vectorWidth != 1) // 128-bit shared-memory fragments (EmitMatmul.cpp)
        o["vector_width"] = vectorWidth;
      if (prefetch)
        o["prefetch"] = static_cast<int64_t>(prefetch);
    }
    break;
  }
  return o;
}

DictionaryAttr ScheduleKnobs::toAttr(MLIRContext *ctx, TaskFamily family) const {
  Builder b(ctx);
  SmallVector<NamedAttribute> entries;
  for (const auto &[k, v] : toJson(family)) {
    Attribute a;
    if (std::optional<int64_t> i = v.getAsInteger())
      a = b.getI64IntegerAttr(*i);
    else if (std::optional<StringRef> s = v.getAsString())
      a = b.getStringAttr(*s);
    else
      a = b.getDenseI64ArrayAttr(llvm::to_vector(llvm::map_range(
          *v.getAsArray(), [](const llvm::json::Value &x) { return *x.getAsInteger(); })));
    entries.push_back(b.getNamedAttr(k.str(), a));
  }
  return b.getDictionaryAttr(entries);
}

LogicalResult ScheduleKnobs::mergeJson(const llvm::json::Object &o, std::string *error) {
  MLIRContext ctx(MLIRContext::Threading::DISABLED);
  Builder b(&ctx);
  SmallVector<NamedAttribute> entries;
  for (const auto &[k, v] : o) {
    Attribute a;
    if (std::optional<int64_t> i = v.getAsInteger())
      a = b.getI64IntegerAttr(*i);
    else if (std::optional<StringRef> s = v.getAsString())
      a = b.getStringAttr(*s);
    else if (const llvm::json::Array *arr = v.getAsArray()) {
      SmallVector<int64_t> vals;
      for (const llvm::json::Value &x : *arr)
        vals.push_back(x.getAsInteger().value_or(0));
      a = b.getDenseI64ArrayAttr(vals);
    }
    if (!a) {
      if (error)
        *error = "knob '" + k.str() + "' has an unsupported JSON value";
      return failure();
    }
    entries.push_back(b.getNamedAttr(k.str(), a));
  }
  std::string msg;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    msg = d.str();
    return success();
  });
  if (failed(merge(b.getDictionaryAttr(entries), [&] { return emitError(UnknownLoc::get(&ctx)); }))) {
    if (error)
      *error = msg;
    return failure();
  }
  return success();
}

bool ScheduleKnobs::operator==(const ScheduleKnobs &o) const {
  return blockSize == o.blockSize && elementsPerThread == o.elementsPerThread &&
         transposeTile == o.transposeTile &&
         vectorWidth == o.vectorWidth && reduction == o.reduction &&
         accumulators == o.accumulators && split == o.split && cacheRow == o.cacheRow && prefetch == o.prefetch &&
         tileSizes == o.tileSizes &&
         threadTile == o.threadTile;
}

} // namespace evo
