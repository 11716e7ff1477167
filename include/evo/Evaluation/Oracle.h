//===- Oracle.h - float64 reference interpreter for linalg on tensors -*- C++ -*-===//
//
// The oracle is the independent reference of evo's GPU verifier: it computes, in float64, the
// value of a function's results at chosen output elements directly from the input IR (linalg on
// tensors), sharing nothing with evo's GPU lowering. It is demand-driven, so that a kernel working
// on 16384x16384 tensors can be checked by sampling output elements: the value of an intermediate
// tensor at an index is computed only when something needs it, and memoized for the rest of the
// session. docs/oracle.md has the semantics, the supported ops and the cost model.
//
//   auto oracle = Oracle::create(func);                 // compile once per task
//   auto read = [&](unsigned arg, uint64_t i) { return inputs[arg][i]; };
//   Oracle::Session s = (*oracle)->session(read);      // one set of inputs
//   double y = s.valueAt(/*result=*/0, /*linearIndex=*/12345);
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_ORACLE_H
#define EVO_EVALUATION_ORACLE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include <cstdint>
#include <functional>
#include <memory>

namespace evo {

namespace oracle_detail {
struct Program;
struct SessionState;
} // namespace oracle_detail

/// Reads element `linearIndex` (row-major) of function argument `arg`, as the exact double value
/// that was written into the device buffer (integers as their signed value). The session owns a
/// copy of the callable, so a temporary lambda is fine; what the lambda captures by reference must
/// outlive the session.
using OracleInputFn = std::function<double(unsigned arg, uint64_t linearIndex)>;

class Oracle {
public:
  /// Prepares `func` (a func.func on static tensors, as evo-lower-to-gpu accepts; it is cloned,
  /// never modified): arith/math on tensors go through upstream convert-elementwise-to-linalg and
  /// named linalg ops through linalg::generalizeNamedOp on the private copy; linalg.softmax is
  /// interpreted from its definition. Every payload is compiled to a small register program.
  /// Unsupported ops and payload ops, and reads of an uninitialized tensor.empty, are a
  /// diagnostic at the op and failure. The result holds no reference to the IR or its context.
  static mlir::FailureOr<std::unique_ptr<Oracle>> create(mlir::func::FuncOp func);
  ~Oracle();

  unsigned getNumArguments() const;
  llvm::ArrayRef<int64_t> getArgumentShape(unsigned arg) const;
  unsigned getNumResults() const;
  llvm::ArrayRef<int64_t> getResultShape(unsigned result) const;
  uint64_t getResultNumElements(unsigned result) const;

  /// Estimated scalar payload evaluations to compute one element of `result` in a fresh session
  /// (nothing memoized yet): what one sampled element costs. A payload with no arithmetic counts
  /// as one evaluation per point. Estimated by propagating the footprint of the element through
  /// the indexing maps (docs/oracle.md); at least 1.
  double costPerElement(unsigned result) const;
  /// Estimated scalar payload evaluations to compute every element of `result` in one session,
  /// each needed intermediate element computed once (memoization): what full checking costs.
  double costOfAllElements(unsigned result) const;

  /// One evaluation with one set of inputs. Every intermediate element (and softmax row
  /// statistics) computed is memoized until the session is destroyed; memory grows with what was
  /// evaluated (about 8 bytes per memoized element, allocated in pages of 256 elements). Sessions
  /// are independent: several may run in parallel threads on the same oracle.
  class Session {
  public:
    Session(Session &&) noexcept;
    Session &operator=(Session &&) noexcept;
    ~Session();

    /// The value of element `linearIndex` (row-major) of function result `result`. Integer
    /// results are their signed value (i1 as 0/1). An index out of range is a fatal error.
    double valueAt(unsigned result, uint64_t linearIndex);
    /// Same, with a multi-index of the result's rank.
    double valueAt(unsigned result, llvm::ArrayRef<int64_t> index);

    /// Scalar payload evaluations executed so far, counted as costPerElement counts them.
    uint64_t getNumPayloadOps() const;
    /// Elements memoized so far (all intermediate and result tensors together).
    uint64_t getNumMemoizedElements() const;

  private:
    friend class Oracle;
    explicit Session(std::unique_ptr<oracle_detail::SessionState> state);
    std::unique_ptr<oracle_detail::SessionState> state;
  };

  /// Starts a session reading function arguments through `inputs`.
  Session session(OracleInputFn inputs) const;

private:
  explicit Oracle(std::unique_ptr<oracle_detail::Program> program);
  std::unique_ptr<oracle_detail::Program> program;
};

} // namespace evo

#endif // EVO_EVALUATION_ORACLE_H
