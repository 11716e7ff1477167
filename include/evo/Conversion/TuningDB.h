//===- TuningDB.h - tuning records: tuned knobs reused without a search -*- C++ -*-===//
//
// A tuning database maps a task's signature (its canonical source: the task func that the
// lowering's task split produced, with the names of the function and its values normalized
// away; so its ops, shapes and dtypes) and a chip to the knobs an evolution run found fastest.
// evo-evolve exports one (Evolution/TuningExport.cpp); `evo-lower-to-gpu tuning-db=FILE` lowers
// each task that has a record for its chip with the record's knobs, at the point where the
// lowering picks a task's knobs (after the task split), so the split itself — which ops fuse into
// which task — never depends on the database. docs/evolution.md, "Tuning records".
//
// The file is untrusted input: it is read only when it is a regular file of at most
// kMaxTuningDbBytes, and every record is validated (its knobs through ScheduleKnobs' own
// checks) before any is used.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_CONVERSION_TUNINGDB_H
#define EVO_CONVERSION_TUNINGDB_H

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <cmath>
#include <string>
#include <vector>

namespace evo {

inline constexpr llvm::StringLiteral kTuningDbFormat = "evo-tuning-db/1";
/// The largest database read (a record is a few KiB; its source carries the task's constants).
inline constexpr uint64_t kMaxTuningDbBytes = 64ull << 20;

/// What identifies a task across modules and runs.
struct TaskSignature {
  /// The task func printed with its name replaced by `@task`, without argument/result
  /// attributes, visibility, or the `evo.knobs` of its ops (knobs choose a schedule, not the
  /// computation). Values are printed by the printer's own numbering, so the input's value names
  /// never reach it.
  std::string canonical;
  /// SHA-256 of `canonical`, lowercase hex (64 characters).
  std::string hash;
  /// For people: the task's compute ops (`linalg.matmul, linalg.generic`) and its type.
  std::string ops, type;
};

/// The signature of a task func as the lowering's task split made it.
TaskSignature taskSignature(mlir::func::FuncOp task);

struct TuningRecord;
/// A record for the task whose source (a plan's or the run store's) is `source`, on `chip`: its
/// signature fields filled, the rest left to the caller. Failure when the source does not parse.
mlir::FailureOr<TuningRecord> recordForTaskSource(llvm::StringRef source, mlir::MLIRContext *ctx,
                                                  llvm::StringRef chip);

/// One tuned task.
struct TuningRecord {
  std::string signature; // TaskSignature::hash
  std::string chip;      // the chip the knobs were measured for (evo-evolve's chip=)
  std::string features;  // its PTX features (informational)
  TaskFamily family = TaskFamily::Elementwise;
  /// "knobs": the knobs are the winner. "ir": the winner is more than a knob set (IR rewrites
  /// of the built-in mutators, or LLM-written kernels); `ir` holds its kernels and `knobs` the
  /// schedule they were built on, which is what evo-lower-to-gpu applies.
  std::string kind = "knobs";
  /// As JSON (the run store's form: only the knobs the family records), and validated.
  llvm::json::Object knobsJson;
  ScheduleKnobs knobs;
  llvm::json::Array rewrites;
  std::string op; // the winner's operator (knob-mutate, ir-unroll, llm-mutate, ...)
  std::string ir; // kind "ir": the winner's gpu.module
  std::string source, ops, type; // TaskSignature::canonical, ops, type
  double baselineMs = NAN, bestMs = NAN;
  bool remeasured = false; // both times are the finalists' re-measurement
  std::string measuredAt;  // ISO 8601 UTC: when the winner's verdict was recorded
  llvm::json::Object run;  // where it came from: run dir, task, candidate id, GPU, evo-opt

  double speedup() const { return baselineMs > 0 && bestMs > 0 ? baselineMs / bestMs : NAN; }
  llvm::json::Object toJson() const;
};

/// Why a database could not be read: the message, and where in the file when known (line and
/// column from 1; 0: the file as a whole).
struct TuningDbError {
  std::string message;
  unsigned line = 0, column = 0;
};

class TuningDb {
public:
  /// Which of two records for one signature and chip a merge keeps.
  enum class Prefer { Fastest, Newest };

  /// Reads `path`: a regular file of at most kMaxTuningDbBytes holding a valid database.
  static std::optional<TuningDb> load(llvm::StringRef path, TuningDbError &error);
  /// Parses and validates a database's text. Two records for one signature and chip are an
  /// error (a merge chooses between them; a file is never ambiguous).
  static std::optional<TuningDb> parse(llvm::StringRef text, TuningDbError &error);

  /// Adds `r`, or keeps the one already held for its signature and chip, whichever `prefer`
  /// says (Fastest: the lower best_ms, then the newer; Newest: the newer, then the faster).
  /// Returns whether `r` was taken.
  bool add(TuningRecord r, Prefer prefer);
  /// The record for `signature` on `chip`, if any.
  const TuningRecord *lookup(llvm::StringRef signature, llvm::StringRef chip) const;
  /// Records for `signature` on other chips than `chip`.
  std::vector<const TuningRecord *> otherChips(llvm::StringRef signature,
                                               llvm::StringRef chip) const;
  const std::vector<TuningRecord> &records() const { return recs; }

  /// The database as JSON: `format` and `records` (sorted by signature, then chip).
  llvm::json::Value toJson() const;
  /// Writes it atomically (a temporary file renamed into place: a reader never sees half),
  /// creating its directory when missing; "-" is stdout.
  llvm::Error write(llvm::StringRef path) const;

private:
  std::vector<TuningRecord> recs;
};

/// A database to edit by hand: one record per task of the lowered `module`'s plans (every
/// gpu.module with an evo.plan), with the knobs the task was lowered with, for `chip`, and no
/// times. Its errors are diagnostics at the gpu.module.
mlir::FailureOr<TuningDb> tuningTemplate(mlir::ModuleOp module, llvm::StringRef chip);

/// Adds `records` to the database at `path` (created with its directory if missing; an existing file must be a
/// valid database), keeping per signature and chip the record `prefer` says, and writes it back
/// atomically. Writers of one file are serialized by a lock on its directory.
llvm::Error addToTuningDb(llvm::StringRef path, const TuningDb &records, TuningDb::Prefer prefer);

/// `path: message` or `path:line:col: message`.
std::string describe(llvm::StringRef path, const TuningDbError &error);

} // namespace evo

#endif // EVO_CONVERSION_TUNINGDB_H
