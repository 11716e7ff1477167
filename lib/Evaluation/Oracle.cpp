//===- Oracle.cpp - float64 reference interpreter for linalg on tensors ------===//
//
// create() clones the function, brings it to a small core (linalg.generic, linalg.softmax,
// constants, tensor.empty) with upstream transformations, and compiles it to a Program: a DAG of
// nodes whose payloads are register programs and whose indexing maps are coefficient tables.
// A Session evaluates the Program on demand with per-(value, element) memoization. No IR is used
// after create().
//
// Why one file of ~1900 lines: the Program's node kinds, the compiler from IR that builds them
// and the evaluator share private types (register programs, coefficient tables) that nothing
// else may see; the reference stays one self-contained unit, independent of the lowering.
//
//===----------------------------------------------------------------------===//

#include "evo/Evaluation/Oracle.h"
#include "evo/Conversion/ScalarArguments.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace evo {
namespace oracle_detail {

//===----------------------------------------------------------------------===//
// Program representation
//===----------------------------------------------------------------------===//

/// One scalar: floats (of any width) as double, integers as int64 sign-extended from their width.
union Reg {
  double f;
  int64_t i;
};

/// How a scalar type is represented: float, or integer of `width` bits (index: 64).
struct ElemKind {
  bool isFloat = true;
  unsigned width = 64;
};

// clang-format off
enum class Op : uint8_t {
  // float
  AddF, SubF, MulF, DivF, RemF, NegF, MaximumF, MinimumF, MaxNumF, MinNumF, CmpF, Mov,
  Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Sqrt, Rsqrt, Tanh, Tan, Sin, Cos, Erf, AbsF, PowF,
  Fma, Floor, Ceil, Round, RoundEven, Trunc, Atan, Atan2, CopySign, Cbrt, Sinh, Cosh, Asin, Acos,
  // conversions
  SIToFP, UIToFP, FPToSI, FPToUI, Wrap, ZExt,
  // integer
  AddI, SubI, MulI, DivSI, DivUI, RemSI, RemUI, CeilDivSI, CeilDivUI, FloorDivSI, AndI, OrI,
  XOrI, ShLI, ShRSI, ShRUI, MaxSI, MinSI, MaxUI, MinUI, CmpI, AbsI,
  // other
  Select, Index,
  // reads a tensor (GenericPlan::gathers[a]) at indices held in registers; computeGeneric
  // runs it, execute() never sees it
  Gather,
};
// clang-format on

/// One payload instruction over register slots. `w` is the result's integer width, `sw` the
/// first operand's; `pred` a cmpf/cmpi predicate; Index reads loop `b`.
struct Inst {
  Op op;
  uint8_t w = 64, sw = 64, pred = 0;
  uint32_t d = 0, a = 0, b = 0, c = 0;
};

/// An affine expression in postfix form, for indexing maps that are not linear (mod, div).
struct AffineProg {
  enum class Kind : uint8_t { Dim, Const, Add, Mul, Mod, FloorDiv, CeilDiv };
  struct Step {
    Kind kind;
    int64_t value;
  };
  SmallVector<Step, 8> steps;
};
static constexpr unsigned kMaxAffineDepth = 16;

/// Where a tensor's elements come from.
enum class SrcKind : uint8_t { Arg, Dense, Splat, Node, Empty };
struct Source {
  SrcKind kind = SrcKind::Empty;
  ElemKind elt;
  unsigned index = 0; // Arg: argument number; Dense: table; Node: value id
  Reg splat{0.0};
  Operation *emptyOp = nullptr; // Empty, for diagnostics during create() only
};

/// An operand of a generic that is read at every iteration point.
struct OperandPlan {
  Source src;
  unsigned slot = 0;
  bool linear = true;
  SmallVector<int64_t, 6> coef; // element offset per unit step of each loop
  int64_t offset = 0;
  SmallVector<int64_t, 4> delta;    // offset change when reduction position k advances
  SmallVector<AffineProg, 2> exprs; // one per operand dimension: the map when !linear, and costs
  SmallVector<int64_t, 4> shape, strides;
};

struct OutputPlan {
  Source init;
  bool readInit = false;
  unsigned slot = 0, yieldSlot = 0, valueId = 0;
  SmallVector<int64_t, 4> shape, strides;
  SmallVector<unsigned, 4> loopOfDim; // loop index that each output dimension is (kUnitDim: 0)
};

/// An output dimension of size 1 indexed by the constant 0 (a keep-dim reduction's).
static constexpr unsigned kUnitDim = ~0u;

/// `tensor.extract %t[i...]` in a payload, %t defined outside it: the element of `src` at the
/// indices in registers `indexSlots`, each clamped into its dimension (as evo's kernels read it).
struct GatherPlan {
  Source src;
  SmallVector<int64_t, 4> shape, strides;
  SmallVector<unsigned, 4> indexSlots;
};

struct GenericPlan {
  SmallVector<int64_t, 6> ranges;
  SmallVector<unsigned, 6> parDims, redDims;
  SmallVector<int64_t, 4> redRanges;
  uint64_t redPoints = 1;
  SmallVector<OperandPlan, 4> inputs;
  SmallVector<OutputPlan, 1> outputs;
  std::vector<Inst> insts;
  SmallVector<GatherPlan, 1> gathers;
  SmallVector<std::pair<unsigned, Reg>, 8> constants;
  unsigned numSlots = 0;
  unsigned opsPerPoint = 1;
  bool needLoops = false;
};

struct SoftmaxPlan {
  Source input;
  SmallVector<int64_t, 4> shape;
  unsigned dim = 0;
  uint64_t stride = 1, len = 1;
  unsigned valueId = 0;
};

/// tensor.expand_shape, collapse_shape, cast, extract_slice and pad: each element of the result
/// is one element of the input, or the padding value. Reshapes and casts keep the row-major
/// linear index.
struct ViewPlan {
  enum class Kind { Reshape, Slice, Pad } kind = Kind::Reshape;
  Source input;
  SmallVector<int64_t, 4> shape;              // the result's
  SmallVector<int64_t, 4> inShape, inStrides; // the input's
  SmallVector<int64_t, 4> offsets, steps;     // Slice, per input dimension
  SmallVector<int, 4> resultDim;              // Slice: per input dimension, -1 where dropped
  SmallVector<int64_t, 4> low;                // Pad
  Reg padValue{0.0};
};

struct NodePlan {
  enum class Kind { Generic, Softmax, View } kind;
  GenericPlan generic;
  SoftmaxPlan softmax;
  ViewPlan view;
  uint64_t numElements = 0; // points of the parallel space
};

/// A tensor a node produces (a generic may produce several).
struct ValueInfo {
  unsigned node, result;
  uint64_t numElements;
};

struct Program {
  SmallVector<SmallVector<int64_t, 4>> argShapes;
  SmallVector<Source> results;
  SmallVector<SmallVector<int64_t, 4>> resultShapes;
  SmallVector<uint64_t> resultSizes;
  SmallVector<double> resultCold, resultFull;
  std::vector<NodePlan> nodes;
  std::vector<ValueInfo> values;
  std::vector<std::vector<Reg>> dense;
};

//===----------------------------------------------------------------------===//
// Scalar semantics
//===----------------------------------------------------------------------===//

static constexpr int64_t kTrue = -1; // i1 true, sign-extended

static inline int64_t wrapTo(int64_t v, unsigned w) {
  if (w >= 64)
    return v;
  unsigned s = 64 - w;
  return static_cast<int64_t>(static_cast<uint64_t>(v) << s) >> s;
}
static inline uint64_t zext(int64_t v, unsigned w) {
  if (w >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t(1) << w) - 1);
}

/// Integer arithmetic on the two's complement bits, where overflow is defined.
static inline uint64_t bits(Reg r) { return static_cast<uint64_t>(r.i); }

/// IEEE 754-2019 maximum/minimum: NaN propagates, -0 < +0.
static inline double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
static inline double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
static inline double roundEven(double x) {
  double r = std::round(x);
  if (std::fabs(x - std::trunc(x)) == 0.5)
    r = 2.0 * std::round(x / 2.0);
  return r;
}

/// Float to integer of width `w`, saturating, NaN to 0 (as PTX cvt.rzi does; MLIR says poison).
static inline int64_t fpToSI(double x, unsigned w) {
  if (std::isnan(x))
    return 0;
  double t = std::trunc(x), lim = std::ldexp(1.0, static_cast<int>(w) - 1);
  if (t >= lim)
    return w >= 64 ? std::numeric_limits<int64_t>::max()
                   : static_cast<int64_t>((uint64_t(1) << (w - 1)) - 1);
  if (t < -lim)
    return w >= 64 ? std::numeric_limits<int64_t>::min()
                   : -static_cast<int64_t>(uint64_t(1) << (w - 1));
  return static_cast<int64_t>(t);
}
static inline int64_t fpToUI(double x, unsigned w) {
  if (std::isnan(x) || x <= 0)
    return 0;
  double t = std::trunc(x), lim = std::ldexp(1.0, static_cast<int>(w));
  if (t >= lim)
    return wrapTo(-1, w); // all ones
  return wrapTo(static_cast<int64_t>(static_cast<uint64_t>(t)), w);
}
static inline int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}
static inline int64_t ceilDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0)))
    ++q;
  return q;
}

// clang-format off
static bool cmpF(uint8_t pred, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (static_cast<arith::CmpFPredicate>(pred)) {
  case arith::CmpFPredicate::AlwaysFalse: return false;
  case arith::CmpFPredicate::OEQ: return !unordered && a == b;
  case arith::CmpFPredicate::OGT: return !unordered && a > b;
  case arith::CmpFPredicate::OGE: return !unordered && a >= b;
  case arith::CmpFPredicate::OLT: return !unordered && a < b;
  case arith::CmpFPredicate::OLE: return !unordered && a <= b;
  case arith::CmpFPredicate::ONE: return !unordered && a != b;
  case arith::CmpFPredicate::ORD: return !unordered;
  case arith::CmpFPredicate::UEQ: return unordered || a == b;
  case arith::CmpFPredicate::UGT: return unordered || a > b;
  case arith::CmpFPredicate::UGE: return unordered || a >= b;
  case arith::CmpFPredicate::ULT: return unordered || a < b;
  case arith::CmpFPredicate::ULE: return unordered || a <= b;
  case arith::CmpFPredicate::UNE: return unordered || a != b;
  case arith::CmpFPredicate::UNO: return unordered;
  case arith::CmpFPredicate::AlwaysTrue: return true;
  }
  llvm_unreachable("cmpf predicate");
}

// clang-format on
// clang-format off
static bool cmpI(uint8_t pred, int64_t a, int64_t b, unsigned w) {
  uint64_t ua = zext(a, w), ub = zext(b, w);
  switch (static_cast<arith::CmpIPredicate>(pred)) {
  case arith::CmpIPredicate::eq: return a == b;
  case arith::CmpIPredicate::ne: return a != b;
  case arith::CmpIPredicate::slt: return a < b;
  case arith::CmpIPredicate::sle: return a <= b;
  case arith::CmpIPredicate::sgt: return a > b;
  case arith::CmpIPredicate::sge: return a >= b;
  case arith::CmpIPredicate::ult: return ua < ub;
  case arith::CmpIPredicate::ule: return ua <= ub;
  case arith::CmpIPredicate::ugt: return ua > ub;
  case arith::CmpIPredicate::uge: return ua >= ub;
  }
  llvm_unreachable("cmpi predicate");
}

// clang-format on
// clang-format off
/// Runs a payload program. The only per-instruction work is one switch dispatch.
static void execute(const Inst *in, const Inst *end, Reg *r, const int64_t *loops) {
  for (; in != end; ++in) {
    const Inst &I = *in;
    Reg &d = r[I.d];
    const Reg a = r[I.a];
    switch (I.op) {
    case Op::AddF: d.f = a.f + r[I.b].f; break;
    case Op::SubF: d.f = a.f - r[I.b].f; break;
    case Op::MulF: d.f = a.f * r[I.b].f; break;
    case Op::DivF: d.f = a.f / r[I.b].f; break;
    case Op::RemF: d.f = std::fmod(a.f, r[I.b].f); break;
    case Op::NegF: d.f = -a.f; break;
    case Op::MaximumF: d.f = maximumF(a.f, r[I.b].f); break;
    case Op::MinimumF: d.f = minimumF(a.f, r[I.b].f); break;
    case Op::MaxNumF: d.f = std::fmax(a.f, r[I.b].f); break;
    case Op::MinNumF: d.f = std::fmin(a.f, r[I.b].f); break;
    case Op::CmpF: d.i = cmpF(I.pred, a.f, r[I.b].f) ? kTrue : 0; break;
    case Op::Mov: d = a; break;
    case Op::Exp: d.f = std::exp(a.f); break;
    case Op::Exp2: d.f = std::exp2(a.f); break;
    case Op::Expm1: d.f = std::expm1(a.f); break;
    case Op::Log: d.f = std::log(a.f); break;
    case Op::Log2: d.f = std::log2(a.f); break;
    case Op::Log10: d.f = std::log10(a.f); break;
    case Op::Log1p: d.f = std::log1p(a.f); break;
    case Op::Sqrt: d.f = std::sqrt(a.f); break;
    case Op::Rsqrt: d.f = 1.0 / std::sqrt(a.f); break;
    case Op::Tanh: d.f = std::tanh(a.f); break;
    case Op::Tan: d.f = std::tan(a.f); break;
    case Op::Sin: d.f = std::sin(a.f); break;
    case Op::Cos: d.f = std::cos(a.f); break;
    case Op::Erf: d.f = std::erf(a.f); break;
    case Op::AbsF: d.f = std::fabs(a.f); break;
    case Op::PowF: d.f = std::pow(a.f, r[I.b].f); break;
    case Op::Fma: d.f = std::fma(a.f, r[I.b].f, r[I.c].f); break;
    case Op::Floor: d.f = std::floor(a.f); break;
    case Op::Ceil: d.f = std::ceil(a.f); break;
    case Op::Round: d.f = std::round(a.f); break;
    case Op::RoundEven: d.f = roundEven(a.f); break;
    case Op::Trunc: d.f = std::trunc(a.f); break;
    case Op::Atan: d.f = std::atan(a.f); break;
    case Op::Atan2: d.f = std::atan2(a.f, r[I.b].f); break;
    case Op::CopySign: d.f = std::copysign(a.f, r[I.b].f); break;
    case Op::Cbrt: d.f = std::cbrt(a.f); break;
    case Op::Sinh: d.f = std::sinh(a.f); break;
    case Op::Cosh: d.f = std::cosh(a.f); break;
    case Op::Asin: d.f = std::asin(a.f); break;
    case Op::Acos: d.f = std::acos(a.f); break;
    case Op::SIToFP: d.f = static_cast<double>(a.i); break;
    case Op::UIToFP: d.f = static_cast<double>(zext(a.i, I.sw)); break;
    case Op::FPToSI: d.i = fpToSI(a.f, I.w); break;
    case Op::FPToUI: d.i = fpToUI(a.f, I.w); break;
    case Op::Wrap: d.i = wrapTo(a.i, I.w); break;
    case Op::ZExt: d.i = wrapTo(static_cast<int64_t>(zext(a.i, I.sw)), I.w); break;
    case Op::AddI: d.i = wrapTo(static_cast<int64_t>(bits(a) + bits(r[I.b])), I.w); break;
    case Op::SubI: d.i = wrapTo(static_cast<int64_t>(bits(a) - bits(r[I.b])), I.w); break;
    case Op::MulI: d.i = wrapTo(static_cast<int64_t>(bits(a) * bits(r[I.b])), I.w); break;
    case Op::DivSI: {
      int64_t b = r[I.b].i;
      d.i = b == 0 ? 0 : wrapTo(b == -1 ? static_cast<int64_t>(0 - bits(a)) : a.i / b, I.w);
      break;
    }
    case Op::DivUI: {
      uint64_t b = zext(r[I.b].i, I.w);
      d.i = b == 0 ? 0 : wrapTo(static_cast<int64_t>(zext(a.i, I.w) / b), I.w);
      break;
    }
    case Op::RemSI: {
      int64_t b = r[I.b].i;
      d.i = (b == 0 || b == -1) ? 0 : a.i % b;
      break;
    }
    case Op::RemUI: {
      uint64_t b = zext(r[I.b].i, I.w);
      d.i = b == 0 ? 0 : wrapTo(static_cast<int64_t>(zext(a.i, I.w) % b), I.w);
      break;
    }
    case Op::CeilDivSI: d.i = wrapTo(ceilDiv(a.i, r[I.b].i), I.w); break;
    case Op::FloorDivSI: d.i = wrapTo(floorDiv(a.i, r[I.b].i), I.w); break;
    case Op::CeilDivUI: {
      uint64_t x = zext(a.i, I.w), b = zext(r[I.b].i, I.w);
      d.i = b == 0 ? 0 : wrapTo(static_cast<int64_t>(x / b + (x % b != 0)), I.w);
      break;
    }
    case Op::AndI: d.i = a.i & r[I.b].i; break;
    case Op::OrI: d.i = a.i | r[I.b].i; break;
    case Op::XOrI: d.i = a.i ^ r[I.b].i; break;
    case Op::ShLI: {
      uint64_t s = zext(r[I.b].i, I.w);
      d.i = s >= I.w ? 0 : wrapTo(static_cast<int64_t>(static_cast<uint64_t>(a.i) << s), I.w);
      break;
    }
    case Op::ShRSI: {
      uint64_t s = zext(r[I.b].i, I.w);
      d.i = s >= I.w ? (a.i < 0 ? -1 : 0) : (a.i >> s);
      break;
    }
    case Op::ShRUI: {
      uint64_t s = zext(r[I.b].i, I.w);
      d.i = s >= I.w ? 0 : wrapTo(static_cast<int64_t>(zext(a.i, I.w) >> s), I.w);
      break;
    }
    case Op::MaxSI: d.i = std::max(a.i, r[I.b].i); break;
    case Op::MinSI: d.i = std::min(a.i, r[I.b].i); break;
    case Op::MaxUI: d.i = zext(a.i, I.w) >= zext(r[I.b].i, I.w) ? a.i : r[I.b].i; break;
    case Op::MinUI: d.i = zext(a.i, I.w) <= zext(r[I.b].i, I.w) ? a.i : r[I.b].i; break;
    case Op::CmpI: d.i = cmpI(I.pred, a.i, r[I.b].i, I.sw) ? kTrue : 0; break;
    case Op::AbsI:
      d.i = wrapTo(a.i < 0 ? static_cast<int64_t>(0 - bits(a)) : a.i, I.w);
      break;
    case Op::Select: d = a.i != 0 ? r[I.b] : r[I.c]; break;
    case Op::Index: d.i = loops[I.b]; break;
    case Op::Gather: llvm_unreachable("gathers run in SessionState::runPayload");
    }
  }
}

// clang-format on
static int64_t evalAffine(const AffineProg &prog, const int64_t *loops) {
  int64_t st[kMaxAffineDepth];
  unsigned sp = 0;
  for (const AffineProg::Step &s : prog.steps) {
    switch (s.kind) {
    case AffineProg::Kind::Dim:
      st[sp++] = loops[s.value];
      continue;
    case AffineProg::Kind::Const:
      st[sp++] = s.value;
      continue;
    default:
      break;
    }
    int64_t b = st[--sp], &a = st[sp - 1];
    switch (s.kind) {
    case AffineProg::Kind::Add:
      a += b;
      break;
    case AffineProg::Kind::Mul:
      a *= b;
      break;
    case AffineProg::Kind::Mod:
      a = b == 0 ? 0 : a - b * floorDiv(a, b);
      break;
    case AffineProg::Kind::FloorDiv:
      a = floorDiv(a, b);
      break;
    case AffineProg::Kind::CeilDiv:
      a = ceilDiv(a, b);
      break;
    default:
      llvm_unreachable("leaf step");
    }
  }
  return st[0];
}

static inline Reg fromInput(double v, ElemKind k) {
  Reg r;
  if (k.isFloat) {
    r.f = v;
    return r;
  }
  int64_t i = 0;
  if (!std::isnan(v))
    i = v >= 9.2233720368547758e18    ? std::numeric_limits<int64_t>::max()
        : v <= -9.2233720368547758e18 ? std::numeric_limits<int64_t>::min()
                                      : static_cast<int64_t>(v);
  r.i = wrapTo(i, k.width);
  return r;
}

static inline double toDouble(Reg r, ElemKind k) {
  if (k.isFloat)
    return r.f;
  if (k.width == 1)
    return static_cast<double>(r.i & 1);
  return static_cast<double>(r.i);
}

//===----------------------------------------------------------------------===//
// Building the program from IR
//===----------------------------------------------------------------------===//

static std::optional<ElemKind> kindOf(Type t) {
  if (isa<FloatType>(t))
    return ElemKind{true, 64};
  if (auto i = dyn_cast<IntegerType>(t)) {
    if (i.getWidth() > 64)
      return std::nullopt;
    return ElemKind{false, i.getWidth()};
  }
  if (isa<IndexType>(t))
    return ElemKind{false, 64};
  return std::nullopt;
}

static double apToDouble(APFloat v) {
  bool lost = false;
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToDouble();
}

static SmallVector<int64_t, 4> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

static uint64_t numElementsOf(ArrayRef<int64_t> shape) {
  uint64_t n = 1;
  for (int64_t s : shape)
    n *= static_cast<uint64_t>(s);
  return n;
}

static InFlightDiagnostic cannotInterpret(Operation *op) {
  return op->emitError() << "the oracle cannot interpret '" << op->getName() << "'";
}

static std::optional<Op> simpleOpcode(StringRef name) {
  return llvm::StringSwitch<std::optional<Op>>(name)
      .Case("arith.addf", Op::AddF)
      .Case("arith.subf", Op::SubF)
      .Case("arith.mulf", Op::MulF)
      .Case("arith.divf", Op::DivF)
      .Case("arith.remf", Op::RemF)
      .Case("arith.negf", Op::NegF)
      .Case("arith.maximumf", Op::MaximumF)
      .Case("arith.minimumf", Op::MinimumF)
      .Case("arith.maxnumf", Op::MaxNumF)
      .Case("arith.minnumf", Op::MinNumF)
      .Case("arith.cmpf", Op::CmpF)
      .Case("arith.extf", Op::Mov)
      .Case("arith.truncf", Op::Mov)
      .Case("arith.select", Op::Select)
      .Case("arith.sitofp", Op::SIToFP)
      .Case("arith.uitofp", Op::UIToFP)
      .Case("arith.fptosi", Op::FPToSI)
      .Case("arith.fptoui", Op::FPToUI)
      .Case("arith.index_cast", Op::Wrap)
      .Case("arith.index_castui", Op::ZExt)
      .Case("arith.extsi", Op::Wrap)
      .Case("arith.extui", Op::ZExt)
      .Case("arith.trunci", Op::Wrap)
      .Case("arith.addi", Op::AddI)
      .Case("arith.subi", Op::SubI)
      .Case("arith.muli", Op::MulI)
      .Case("arith.divsi", Op::DivSI)
      .Case("arith.divui", Op::DivUI)
      .Case("arith.remsi", Op::RemSI)
      .Case("arith.remui", Op::RemUI)
      .Case("arith.ceildivsi", Op::CeilDivSI)
      .Case("arith.ceildivui", Op::CeilDivUI)
      .Case("arith.floordivsi", Op::FloorDivSI)
      .Case("arith.andi", Op::AndI)
      .Case("arith.ori", Op::OrI)
      .Case("arith.xori", Op::XOrI)
      .Case("arith.shli", Op::ShLI)
      .Case("arith.shrsi", Op::ShRSI)
      .Case("arith.shrui", Op::ShRUI)
      .Case("arith.maxsi", Op::MaxSI)
      .Case("arith.minsi", Op::MinSI)
      .Case("arith.maxui", Op::MaxUI)
      .Case("arith.minui", Op::MinUI)
      .Case("arith.cmpi", Op::CmpI)
      .Case("math.exp", Op::Exp)
      .Case("math.exp2", Op::Exp2)
      .Case("math.expm1", Op::Expm1)
      .Case("math.log", Op::Log)
      .Case("math.log2", Op::Log2)
      .Case("math.log10", Op::Log10)
      .Case("math.log1p", Op::Log1p)
      .Case("math.sqrt", Op::Sqrt)
      .Case("math.rsqrt", Op::Rsqrt)
      .Case("math.tanh", Op::Tanh)
      .Case("math.tan", Op::Tan)
      .Case("math.sin", Op::Sin)
      .Case("math.cos", Op::Cos)
      .Case("math.erf", Op::Erf)
      .Case("math.absf", Op::AbsF)
      .Case("math.absi", Op::AbsI)
      .Case("math.powf", Op::PowF)
      .Case("math.fma", Op::Fma)
      .Case("math.floor", Op::Floor)
      .Case("math.ceil", Op::Ceil)
      .Case("math.round", Op::Round)
      .Case("math.roundeven", Op::RoundEven)
      .Case("math.trunc", Op::Trunc)
      .Case("math.atan", Op::Atan)
      .Case("math.atan2", Op::Atan2)
      .Case("math.copysign", Op::CopySign)
      .Case("math.cbrt", Op::Cbrt)
      .Case("math.sinh", Op::Sinh)
      .Case("math.cosh", Op::Cosh)
      .Case("math.asin", Op::Asin)
      .Case("math.acos", Op::Acos)
      .Default(std::nullopt);
}

/// Compiles one scalar op whose operands are in `operands` slots into an instruction writing `dst`.
static FailureOr<Inst> compileScalarOp(Operation *op, ArrayRef<unsigned> operands, unsigned dst) {
  std::optional<Op> code = simpleOpcode(op->getName().getStringRef());
  if (!code || op->getNumResults() != 1 || op->getNumRegions() != 0 || operands.empty() ||
      operands.size() > 3)
    return cannotInterpret(op);
  std::optional<ElemKind> rk = kindOf(op->getResult(0).getType());
  if (!rk)
    return cannotInterpret(op);
  for (Value v : op->getOperands())
    if (!kindOf(v.getType()))
      return cannotInterpret(op);
  ElemKind ok = *kindOf(op->getOperand(0).getType());
  Inst inst;
  inst.op = *code;
  inst.w = static_cast<uint8_t>(rk->width);
  inst.sw = static_cast<uint8_t>(ok.width);
  inst.d = dst;
  inst.a = operands[0];
  inst.b = operands.size() > 1 ? operands[1] : operands[0];
  inst.c = operands.size() > 2 ? operands[2] : operands[0];
  if (auto cmp = dyn_cast<arith::CmpFOp>(op))
    inst.pred = static_cast<uint8_t>(cmp.getPredicate());
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    inst.pred = static_cast<uint8_t>(cmp.getPredicate());
  return inst;
}

static std::optional<Reg> scalarAttrValue(Attribute attr, ElemKind k) {
  Reg r;
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    r.f = apToDouble(f.getValue());
    return r;
  }
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    r.i = wrapTo(i.getValue().getSExtValue(), k.width);
    return r;
  }
  return std::nullopt;
}

/// Linear form of an affine expression: `scale * e` accumulated into coef/constant.
static bool linearize(AffineExpr e, int64_t scale, MutableArrayRef<int64_t> coef,
                      int64_t &constant) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    coef[d.getPosition()] += scale;
    return true;
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    constant += scale * c.getValue();
    return true;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return false;
  if (e.getKind() == AffineExprKind::Add)
    return linearize(bin.getLHS(), scale, coef, constant) &&
           linearize(bin.getRHS(), scale, coef, constant);
  if (e.getKind() == AffineExprKind::Mul) {
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      return linearize(bin.getLHS(), scale * c.getValue(), coef, constant);
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
      return linearize(bin.getRHS(), scale * c.getValue(), coef, constant);
  }
  return false;
}

/// Postfix form of `e`; false for symbols.
static bool compileAffine(AffineExpr e, AffineProg &prog) {
  using K = AffineProg::Kind;
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    prog.steps.push_back({K::Dim, static_cast<int64_t>(d.getPosition())});
    return true;
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    prog.steps.push_back({K::Const, c.getValue()});
    return true;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin || !compileAffine(bin.getLHS(), prog) || !compileAffine(bin.getRHS(), prog))
    return false;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    prog.steps.push_back({K::Add, 0});
    return true;
  case AffineExprKind::Mul:
    prog.steps.push_back({K::Mul, 0});
    return true;
  case AffineExprKind::Mod:
    prog.steps.push_back({K::Mod, 0});
    return true;
  case AffineExprKind::FloorDiv:
    prog.steps.push_back({K::FloorDiv, 0});
    return true;
  case AffineExprKind::CeilDiv:
    prog.steps.push_back({K::CeilDiv, 0});
    return true;
  default:
    return false;
  }
}

/// Conservative bounds of `prog` over the loop box [0, ranges); nullopt when unknown or when the
/// expression stack is deeper than the evaluator's.
static std::optional<std::pair<int64_t, int64_t>> affineBounds(const AffineProg &prog,
                                                               ArrayRef<int64_t> ranges) {
  using K = AffineProg::Kind;
  SmallVector<std::pair<int64_t, int64_t>, 8> st;
  for (const AffineProg::Step &s : prog.steps) {
    if (s.kind == K::Dim) {
      st.push_back({0, ranges[s.value] - 1});
    } else if (s.kind == K::Const) {
      st.push_back({s.value, s.value});
    } else {
      auto b = st.pop_back_val();
      auto &a = st.back();
      switch (s.kind) {
      case K::Add:
        a = {a.first + b.first, a.second + b.second};
        break;
      case K::Mul: {
        int64_t p[4] = {a.first * b.first, a.first * b.second, a.second * b.first,
                        a.second * b.second};
        a = {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
        break;
      }
      case K::Mod:
        if (b.first != b.second || b.first <= 0)
          return std::nullopt;
        if (!(a.first >= 0 && a.second < b.first))
          a = {0, b.first - 1};
        break;
      case K::FloorDiv:
        if (b.first != b.second || b.first <= 0)
          return std::nullopt;
        a = {floorDiv(a.first, b.first), floorDiv(a.second, b.first)};
        break;
      case K::CeilDiv:
        if (b.first != b.second || b.first <= 0)
          return std::nullopt;
        a = {ceilDiv(a.first, b.first), ceilDiv(a.second, b.first)};
        break;
      default:
        llvm_unreachable("leaf step");
      }
    }
    if (st.size() > kMaxAffineDepth)
      return std::nullopt;
  }
  return st.back();
}

namespace {
/// The payload's slots while a generic is compiled: block arguments, then constants and results.
struct PayloadSlots {
  explicit PayloadSlots(GenericPlan &g, Block &body) : g(g), constantSlot(body.getNumArguments()) {
    g.numSlots = body.getNumArguments();
    for (BlockArgument arg : body.getArguments())
      slotOf[arg] = arg.getArgNumber();
  }
  /// A fresh slot preloaded with `value`.
  unsigned addConstant(Reg value) {
    g.constants.push_back({g.numSlots, value});
    constantSlot.resize(g.numSlots + 1);
    constantSlot.set(g.numSlots);
    return g.numSlots++;
  }
  /// Preloads an existing slot (a constant input's argument) with `value`.
  void setConstant(unsigned slot, Reg value) {
    g.constants.push_back({slot, value});
    constantSlot.set(slot);
  }

  GenericPlan &g;
  DenseMap<Value, unsigned> slotOf;
  llvm::SmallBitVector constantSlot;
};

class ProgramBuilder {
public:
  explicit ProgramBuilder(Program &prog) : prog(prog) {}
  LogicalResult build(func::FuncOp func);

private:
  FailureOr<Reg> evalScalar(Value v);
  LogicalResult buildConstant(arith::ConstantOp op);
  LogicalResult buildGeneric(linalg::GenericOp op);
  LogicalResult planInputs(linalg::GenericOp op, GenericPlan &g, PayloadSlots &slots);
  LogicalResult planOutputs(linalg::GenericOp op, GenericPlan &g);
  FailureOr<bool> planPayload(linalg::GenericOp op, GenericPlan &g, PayloadSlots &slots);
  void publishResults(linalg::GenericOp op, NodePlan &node, bool constantYields);
  LogicalResult buildSoftmax(linalg::SoftmaxOp op);
  LogicalResult buildView(Operation *op);
  LogicalResult compileAccess(OperandPlan &plan, AffineMap map, ArrayRef<int64_t> shape,
                              const GenericPlan &g, Operation *op, unsigned operandNo);
  FailureOr<Source> tensorSource(Value v, Operation *user);
  InFlightDiagnostic emptyRead(Operation *user, Source src, const Twine &what);

  Program &prog;
  DenseMap<Value, Source> sources;
  DenseMap<Value, Reg> scalars;
};
} // namespace

static FailureOr<RankedTensorType> staticTensor(Type t, Operation *where, StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor || !tensor.hasStaticShape() || !kindOf(tensor.getElementType())) {
    where->emitError() << "the oracle needs statically shaped tensors of integers (at most 64 "
                          "bits) or floats as "
                       << what << ", got " << t;
    return failure();
  }
  return tensor;
}

InFlightDiagnostic ProgramBuilder::emptyRead(Operation *user, Source src, const Twine &what) {
  InFlightDiagnostic diag = user->emitError() << "the oracle cannot read " << what
                                              << ": it is an uninitialized tensor.empty";
  if (src.emptyOp)
    diag.attachNote(src.emptyOp->getLoc()) << "the tensor.empty is here";
  return diag;
}

FailureOr<Source> ProgramBuilder::tensorSource(Value v, Operation *user) {
  auto it = sources.find(v);
  if (it == sources.end())
    return user->emitError() << "the oracle cannot trace an operand of this op to a tensor it "
                                "interprets";
  return it->second;
}

/// Function-level scalars (constants and arith/math on them, e.g. a fill value or a constant a
/// payload captures) are folded once, here.
FailureOr<Reg> ProgramBuilder::evalScalar(Value v) {
  auto it = scalars.find(v);
  if (it != scalars.end())
    return it->second;
  std::optional<ElemKind> k = kindOf(v.getType());
  Operation *def = v.getDefiningOp();
  if (!def) {
    Operation *owner = cast<BlockArgument>(v).getOwner()->getParentOp();
    return owner->emitError() << "the oracle supports only tensor arguments, got " << v.getType();
  }
  if (!k)
    return cannotInterpret(def);
  Reg result;
  if (auto c = dyn_cast<arith::ConstantOp>(def)) {
    std::optional<Reg> r = scalarAttrValue(c.getValue(), *k);
    if (!r)
      return cannotInterpret(def);
    result = *r;
  } else {
    SmallVector<Reg, 4> regs;
    SmallVector<unsigned, 3> slots;
    for (Value operand : def->getOperands()) {
      FailureOr<Reg> r = evalScalar(operand);
      if (failed(r))
        return failure();
      slots.push_back(regs.size());
      regs.push_back(*r);
    }
    FailureOr<Inst> inst = compileScalarOp(def, slots, regs.size());
    if (failed(inst))
      return failure();
    regs.push_back(Reg{0.0});
    execute(&*inst, &*inst + 1, regs.data(), nullptr);
    result = regs.back();
  }
  scalars[v] = result;
  return result;
}

LogicalResult ProgramBuilder::buildConstant(arith::ConstantOp op) {
  FailureOr<RankedTensorType> type = staticTensor(op.getType(), op, "constants");
  if (failed(type))
    return failure();
  ElemKind k = *kindOf(type->getElementType());
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  // dense_resource (torch-mlir's weights): the blob holds the elements as a dense buffer would.
  if (auto res = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    bool splat = false;
    if (blob && DenseElementsAttr::isValidRawBuffer(res.getType(), blob->getData(), splat))
      dense = DenseElementsAttr::getFromRawBuffer(res.getType(), blob->getData());
  }
  if (!dense) {
    InFlightDiagnostic diag = cannotInterpret(op);
    diag.attachNote() << "only dense elements constants (or dense_resource with their blob) are "
                         "supported";
    return diag;
  }
  Source src;
  src.elt = k;
  auto convert = [&](auto value) {
    Reg r;
    if constexpr (std::is_same_v<decltype(value), APFloat>)
      r.f = apToDouble(value);
    else
      r.i = wrapTo(value.getSExtValue(), k.width);
    return r;
  };
  if (dense.isSplat()) {
    src.kind = SrcKind::Splat;
    src.splat =
        k.isFloat ? convert(dense.getSplatValue<APFloat>()) : convert(dense.getSplatValue<APInt>());
  } else {
    src.kind = SrcKind::Dense;
    src.index = prog.dense.size();
    std::vector<Reg> &table = prog.dense.emplace_back();
    table.reserve(dense.getNumElements());
    if (k.isFloat)
      for (APFloat v : dense.getValues<APFloat>())
        table.push_back(convert(v));
    else
      for (APInt v : dense.getValues<APInt>())
        table.push_back(convert(v));
  }
  sources[op.getResult()] = src;
  return success();
}

LogicalResult ProgramBuilder::compileAccess(OperandPlan &plan, AffineMap map,
                                            ArrayRef<int64_t> shape, const GenericPlan &g,
                                            Operation *op, unsigned operandNo) {
  unsigned numLoops = g.ranges.size();
  if (map.getNumSymbols() != 0 || map.getNumResults() != shape.size())
    return op->emitError() << "the oracle cannot interpret the indexing map of operand #"
                           << operandNo;
  SmallVector<int64_t, 4> strides = rowMajorStrides(shape);
  bool empty = llvm::is_contained(g.ranges, 0);
  auto outOfBounds = [&]() {
    return op->emitError() << "the oracle: operand #" << operandNo
                           << " is read out of bounds by its indexing map "
                           << AffineMapAttr::get(map);
  };

  plan.shape.assign(shape.begin(), shape.end());
  plan.strides = strides;
  for (AffineExpr expr : map.getResults())
    if (!compileAffine(expr, plan.exprs.emplace_back()))
      return op->emitError() << "the oracle cannot interpret the indexing map of operand #"
                             << operandNo;
  plan.coef.assign(numLoops, 0);
  plan.offset = 0;
  for (auto [r, expr] : llvm::enumerate(map.getResults())) {
    SmallVector<int64_t, 6> coef(numLoops, 0);
    int64_t constant = 0;
    if (!linearize(expr, 1, coef, constant)) {
      plan.linear = false;
      break;
    }
    int64_t lo = constant, hi = constant;
    for (unsigned d = 0; d < numLoops; ++d) {
      int64_t span = coef[d] * (g.ranges[d] - 1);
      (span < 0 ? lo : hi) += span;
      plan.coef[d] += strides[r] * coef[d];
    }
    plan.offset += strides[r] * constant;
    if (!empty && (lo < 0 || hi >= shape[r]))
      return outOfBounds();
  }
  if (!plan.linear) {
    plan.coef.clear();
    plan.offset = 0;
    for (auto [r, p] : llvm::enumerate(plan.exprs)) {
      std::optional<std::pair<int64_t, int64_t>> bounds = affineBounds(p, g.ranges);
      if (!empty && !bounds)
        return op->emitError() << "the oracle cannot bound the indexing map of operand #"
                               << operandNo;
      if (!empty && (bounds->first < 0 || bounds->second >= shape[r]))
        return outOfBounds();
    }
    return success();
  }
  // Moving reduction position k by one resets every inner position to 0.
  unsigned nr = g.redDims.size();
  plan.delta.assign(nr, 0);
  for (unsigned k = 0; k < nr; ++k) {
    int64_t delta = plan.coef[g.redDims[k]];
    for (unsigned j = k + 1; j < nr; ++j)
      delta -= plan.coef[g.redDims[j]] * (g.redRanges[j] - 1);
    plan.delta[k] = delta;
  }
  return success();
}

LogicalResult ProgramBuilder::buildGeneric(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics())
    return op.emitError("the oracle needs linalg on tensors");
  NodePlan node;
  node.kind = NodePlan::Kind::Generic;
  GenericPlan &g = node.generic;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  g.ranges.assign(ranges.begin(), ranges.end());
  if (llvm::any_of(g.ranges, ShapedType::isDynamic))
    return op.emitError("the oracle needs static loop ranges");
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (it == utils::IteratorType::reduction) {
      g.redDims.push_back(d);
      g.redRanges.push_back(g.ranges[d]);
      g.redPoints *= static_cast<uint64_t>(g.ranges[d]);
    } else {
      g.parDims.push_back(d);
    }
  }

  Block &body = *op.getBlock();
  PayloadSlots slots(g, body);
  if (failed(planInputs(op, g, slots)) || failed(planOutputs(op, g)))
    return failure();
  FailureOr<bool> constantYields = planPayload(op, g, slots);
  if (failed(constantYields))
    return failure();
  g.opsPerPoint = std::max<unsigned>(1, g.insts.size());
  publishResults(op, node, *constantYields);
  return success();
}

LogicalResult ProgramBuilder::planInputs(linalg::GenericOp op, GenericPlan &g,
                                         PayloadSlots &slots) {
  // Inputs: read at every point unless constant or unused by the payload.
  for (OpOperand *in : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(in);
    if (arg.use_empty())
      continue;
    unsigned number = in->getOperandNumber();
    if (!isa<ShapedType>(in->get().getType())) {
      FailureOr<Reg> value = evalScalar(in->get());
      if (failed(value))
        return failure();
      slots.setConstant(arg.getArgNumber(), *value);
      continue;
    }
    FailureOr<Source> src = tensorSource(in->get(), op);
    if (failed(src))
      return failure();
    if (src->kind == SrcKind::Empty)
      return emptyRead(op, *src, "input #" + Twine(number));
    if (src->kind == SrcKind::Splat) {
      slots.setConstant(arg.getArgNumber(), src->splat);
      continue;
    }
    OperandPlan plan;
    plan.src = *src;
    plan.slot = arg.getArgNumber();
    auto type = cast<RankedTensorType>(in->get().getType());
    if (failed(compileAccess(plan, op.getMatchingIndexingMap(in), type.getShape(), g, op, number)))
      return failure();
    g.needLoops |= !plan.linear;
    g.inputs.push_back(std::move(plan));
  }
  return success();
}

LogicalResult ProgramBuilder::planOutputs(linalg::GenericOp op, GenericPlan &g) {
  // Outputs: indexed by a permutation of the parallel loops; the init is read only if the payload
  // reads the out argument (or there is no reduction point at all).
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument arg = op.getMatchingBlockArgument(&init);
    AffineMap map = op.getMatchingIndexingMap(&init);
    OutputPlan out;
    out.slot = arg.getArgNumber();
    FailureOr<RankedTensorType> type =
        staticTensor(init.get().getType(), op, "operands of linalg.generic");
    if (failed(type))
      return failure();
    out.shape.assign(type->getShape().begin(), type->getShape().end());
    out.strides = rowMajorStrides(out.shape);
    unsigned unitDims = 0;
    llvm::SmallBitVector seen(g.ranges.size());
    bool permutation = true;
    for (auto [j, e] : llvm::enumerate(map.getResults())) {
      if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0 && out.shape[j] == 1) {
        out.loopOfDim.push_back(kUnitDim);
        ++unitDims;
        continue;
      }
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d || seen.test(d.getPosition()) || !llvm::is_contained(g.parDims, d.getPosition())) {
        permutation = false;
        break;
      }
      seen.set(d.getPosition());
      out.loopOfDim.push_back(d.getPosition());
    }
    if (!permutation || map.getNumResults() - unitDims != g.parDims.size())
      return op.emitError() << "the oracle needs output indexing maps that are permutations of "
                               "the parallel loops (and 0 for dimensions of size 1), got "
                            << AffineMapAttr::get(map);
    FailureOr<Source> src = tensorSource(init.get(), op);
    if (failed(src))
      return failure();
    out.init = *src;
    out.readInit = !arg.use_empty() || g.redPoints == 0;
    if (out.readInit && src->kind == SrcKind::Empty)
      return emptyRead(op, *src, "init #" + Twine(g.outputs.size()));
    g.outputs.push_back(std::move(out));
  }
  return success();
}

/// Whether every yielded value is a constant.
FailureOr<bool> ProgramBuilder::planPayload(linalg::GenericOp op, GenericPlan &g,
                                            PayloadSlots &slots) {
  Block &body = *op.getBlock();
  // Payload: one instruction per op; constants and captured scalars are preloaded slots.
  auto resolve = [&](Value v) -> FailureOr<unsigned> {
    auto it = slots.slotOf.find(v);
    if (it != slots.slotOf.end())
      return it->second;
    FailureOr<Reg> value = evalScalar(v); // defined above the generic
    if (failed(value))
      return failure();
    unsigned slot = slots.addConstant(*value);
    slots.slotOf[v] = slot;
    return slot;
  };
  for (Operation &inner : body.without_terminator()) {
    if (inner.getNumResults() != 1)
      return cannotInterpret(&inner);
    Value result = inner.getResult(0);
    if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
      std::optional<ElemKind> k = kindOf(c.getType());
      std::optional<Reg> value = k ? scalarAttrValue(c.getValue(), *k) : std::nullopt;
      if (!value)
        return cannotInterpret(c);
      slots.slotOf[result] = slots.addConstant(*value);
      continue;
    }
    unsigned dst = g.numSlots++;
    slots.constantSlot.resize(g.numSlots);
    slots.slotOf[result] = dst;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      Inst inst;
      inst.op = Op::Index;
      inst.d = inst.a = dst;
      inst.b = static_cast<uint32_t>(index.getDim());
      g.insts.push_back(inst);
      g.needLoops = true;
      continue;
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(inner);
        extract && !op.getRegion().isAncestor(extract.getTensor().getParentRegion())) {
      FailureOr<RankedTensorType> type = staticTensor(extract.getTensor().getType(), extract,
                                                      "gathered tensors");
      if (failed(type))
        return failure();
      FailureOr<Source> src = tensorSource(extract.getTensor(), extract);
      if (failed(src))
        return failure();
      if (src->kind == SrcKind::Empty)
        return emptyRead(extract, *src, "the gathered tensor");
      GatherPlan gather;
      gather.src = *src;
      gather.shape.assign(type->getShape().begin(), type->getShape().end());
      gather.strides = rowMajorStrides(type->getShape());
      for (Value i : extract.getIndices()) {
        FailureOr<unsigned> slot = resolve(i);
        if (failed(slot))
          return failure();
        gather.indexSlots.push_back(*slot);
      }
      Inst inst;
      inst.op = Op::Gather;
      inst.d = dst;
      inst.a = g.gathers.size();
      g.gathers.push_back(std::move(gather));
      g.insts.push_back(inst);
      continue;
    }
    SmallVector<unsigned, 3> operands;
    for (Value v : inner.getOperands()) {
      FailureOr<unsigned> slot = resolve(v);
      if (failed(slot))
        return failure();
      operands.push_back(*slot);
    }
    FailureOr<Inst> inst = compileScalarOp(&inner, operands, dst);
    if (failed(inst))
      return failure();
    g.insts.push_back(*inst);
  }
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  bool constantYields = g.redDims.empty();
  for (auto [k, v] : llvm::enumerate(yield.getValues())) {
    FailureOr<unsigned> slot = resolve(v);
    if (failed(slot))
      return failure();
    g.outputs[k].yieldSlot = *slot;
    constantYields &= slots.constantSlot.test(*slot);
  }
  return constantYields;
}

void ProgramBuilder::publishResults(linalg::GenericOp op, NodePlan &node, bool constantYields) {
  GenericPlan &g = node.generic;
  // A parallel generic yielding constants (a fill) is a splat: nothing to evaluate or memoize.
  if (constantYields) {
    for (auto [k, out] : llvm::enumerate(g.outputs)) {
      Source src;
      src.kind = SrcKind::Splat;
      src.elt = *kindOf(cast<ShapedType>(op.getResult(k).getType()).getElementType());
      for (auto [slot, value] : g.constants)
        if (slot == out.yieldSlot)
          src.splat = value;
      sources[op.getResult(k)] = src;
    }
    return;
  }

  unsigned nodeIndex = prog.nodes.size();
  node.numElements = 1;
  for (unsigned d : g.parDims)
    node.numElements *= static_cast<uint64_t>(g.ranges[d]);
  for (auto [k, out] : llvm::enumerate(g.outputs)) {
    out.valueId = prog.values.size();
    prog.values.push_back({nodeIndex, static_cast<unsigned>(k), node.numElements});
    Source src;
    src.kind = SrcKind::Node;
    src.elt = *kindOf(cast<ShapedType>(op.getResult(k).getType()).getElementType());
    src.index = out.valueId;
    sources[op.getResult(k)] = src;
  }
  prog.nodes.push_back(std::move(node));
}

LogicalResult ProgramBuilder::buildSoftmax(linalg::SoftmaxOp op) {
  FailureOr<RankedTensorType> type = staticTensor(op.getInput().getType(), op, "softmax input");
  if (failed(type))
    return failure();
  if (!isa<FloatType>(type->getElementType()))
    return op.emitError("the oracle needs a float softmax");
  FailureOr<Source> src = tensorSource(op.getInput(), op);
  if (failed(src))
    return failure();
  if (src->kind == SrcKind::Empty)
    return emptyRead(op, *src, "the softmax input");
  NodePlan node;
  node.kind = NodePlan::Kind::Softmax;
  SoftmaxPlan &s = node.softmax;
  s.input = *src;
  unsigned dim = op.getDimension();
  SmallVector<int64_t, 4> strides = rowMajorStrides(type->getShape());
  s.shape.assign(type->getShape().begin(), type->getShape().end());
  s.dim = dim;
  s.stride = strides[dim];
  s.len = type->getShape()[dim];
  s.valueId = prog.values.size();
  node.numElements = numElementsOf(type->getShape());
  unsigned nodeIndex = prog.nodes.size();
  prog.values.push_back({nodeIndex, 0, node.numElements});
  Source result;
  result.kind = SrcKind::Node;
  result.elt = ElemKind{true, 64};
  result.index = s.valueId;
  sources[op.getResult()[0]] = result;
  prog.nodes.push_back(std::move(node));
  return success();
}

LogicalResult ProgramBuilder::buildView(Operation *op) {
  FailureOr<RankedTensorType> inType = staticTensor(op->getOperand(0).getType(), op, "operands");
  FailureOr<RankedTensorType> type = staticTensor(op->getResult(0).getType(), op, "results");
  if (failed(inType) || failed(type))
    return failure();
  FailureOr<Source> src = tensorSource(op->getOperand(0), op);
  if (failed(src))
    return failure();
  NodePlan node;
  node.kind = NodePlan::Kind::View;
  ViewPlan &v = node.view;
  v.input = *src;
  v.shape.assign(type->getShape().begin(), type->getShape().end());
  v.inShape.assign(inType->getShape().begin(), inType->getShape().end());
  v.inStrides = rowMajorStrides(inType->getShape());
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    v.kind = ViewPlan::Kind::Slice;
    for (ArrayRef<int64_t> a : {slice.getStaticOffsets(), slice.getStaticStrides()})
      if (llvm::any_of(a, ShapedType::isDynamic))
        return op->emitError("the oracle needs static offsets and strides");
    v.offsets.assign(slice.getStaticOffsets().begin(), slice.getStaticOffsets().end());
    v.steps.assign(slice.getStaticStrides().begin(), slice.getStaticStrides().end());
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    int r = 0;
    for (unsigned i = 0; i < v.inShape.size(); ++i)
      v.resultDim.push_back(dropped.test(i) ? -1 : r++);
  } else if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    v.kind = ViewPlan::Kind::Pad;
    if (llvm::any_of(pad.getStaticLow(), ShapedType::isDynamic))
      return op->emitError("the oracle needs static padding");
    v.low.assign(pad.getStaticLow().begin(), pad.getStaticLow().end());
    Value value = pad.getConstantPaddingValue();
    if (!value)
      return op->emitError("the oracle needs a padding value defined outside the pad's region");
    FailureOr<Reg> r = evalScalar(value);
    if (failed(r))
      return failure();
    v.padValue = *r;
  }
  node.numElements = numElementsOf(type->getShape());
  unsigned nodeIndex = prog.nodes.size();
  unsigned valueId = prog.values.size();
  prog.values.push_back({nodeIndex, 0, node.numElements});
  Source result = *src;
  result.kind = SrcKind::Node;
  result.index = valueId;
  // A view of an uninitialized tensor stays one: reading it is an error at its reader.
  if (src->kind == SrcKind::Empty)
    result = *src;
  sources[op->getResult(0)] = result;
  prog.nodes.push_back(std::move(node));
  return success();
}

LogicalResult ProgramBuilder::build(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("the oracle needs a function with a single block");
  for (BlockArgument arg : func.getArguments()) {
    FailureOr<RankedTensorType> type = staticTensor(arg.getType(), func, "function arguments");
    if (failed(type))
      return failure();
    Source src;
    src.kind = SrcKind::Arg;
    src.elt = *kindOf(type->getElementType());
    src.index = arg.getArgNumber();
    sources[arg] = src;
    prog.argShapes.emplace_back(type->getShape().begin(), type->getShape().end());
  }

  for (Operation &op : func.getBody().front()) {
    LogicalResult result = success();
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        FailureOr<RankedTensorType> type = staticTensor(v.getType(), ret, "function results");
        if (failed(type))
          return failure();
        FailureOr<Source> src = tensorSource(v, ret);
        if (failed(src))
          return failure();
        if (src->kind == SrcKind::Empty)
          return emptyRead(ret, *src, "result #" + Twine(i));
        prog.results.push_back(*src);
        prog.resultShapes.emplace_back(type->getShape().begin(), type->getShape().end());
        prog.resultSizes.push_back(numElementsOf(type->getShape()));
      }
    } else if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      result = isa<ShapedType>(c.getType()) ? buildConstant(c)
                                            : LogicalResult(evalScalar(c.getResult()));
    } else if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      FailureOr<RankedTensorType> type = staticTensor(empty.getType(), empty, "tensor.empty");
      if (failed(type))
        return failure();
      Source src;
      src.kind = SrcKind::Empty;
      src.elt = *kindOf(type->getElementType());
      src.emptyOp = empty;
      sources[empty.getResult()] = src;
    } else if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
      result = buildGeneric(generic);
    } else if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
      result = buildSoftmax(softmax);
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
                   tensor::ExtractSliceOp, tensor::PadOp>(op)) {
      result = buildView(&op);
    } else if (op.getNumResults() == 1 && op.getNumRegions() == 0 &&
               !isa<ShapedType>(op.getResult(0).getType()) &&
               llvm::none_of(op.getOperandTypes(), llvm::IsaPred<ShapedType>)) {
      result = LogicalResult(evalScalar(op.getResult(0)));
    } else {
      return cannotInterpret(&op);
    }
    if (failed(result))
      return failure();
  }
  return success();
}

/// tensor.concat as a generic over its result that gathers from its operands: position j along
/// the concatenated dimension takes operand k where j >= k's start (the last such k), read at
/// j - start clamped into k (an in-bounds gather whichever k is taken). Written here, not shared
/// with the lowering's rewrite (evo/Conversion/FrontEnds.h): the reference stays independent.
static LogicalResult concatAsGathers(func::FuncOp work) {
  SmallVector<tensor::ConcatOp> concats;
  work.walk([&](tensor::ConcatOp c) { concats.push_back(c); });
  for (tensor::ConcatOp c : concats) {
    RankedTensorType type = c.getResultType();
    if (!type.hasStaticShape())
      return c.emitError("the oracle needs static shapes for tensor.concat");
    const unsigned rank = type.getRank(), dim = c.getDim();
    OpBuilder b(c);
    Value init = tensor::EmptyOp::create(b, c.getLoc(), type.getShape(), type.getElementType());
    auto generic = linalg::GenericOp::create(
        b, c.getLoc(), TypeRange{type}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange) {
          auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, l, v); };
          SmallVector<Value> ivs;
          for (unsigned d = 0; d < rank; ++d)
            ivs.push_back(linalg::IndexOp::create(nb, l, d));
          Value out;
          int64_t start = 0;
          for (Value in : c.getInputs()) {
            int64_t size = cast<RankedTensorType>(in.getType()).getDimSize(dim);
            if (size <= 0)
              continue;
            SmallVector<Value> at(ivs);
            Value rel = arith::SubIOp::create(nb, l, ivs[dim], index(start));
            at[dim] = arith::MinSIOp::create(
                nb, l, arith::MaxSIOp::create(nb, l, rel, index(0)), index(size - 1));
            Value v = tensor::ExtractOp::create(nb, l, in, at);
            out = !out ? v
                       : arith::SelectOp::create(
                             nb, l,
                             arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, ivs[dim],
                                                   index(start)),
                             v, out);
            start += size;
          }
          if (!out)
            out = arith::ConstantOp::create(nb, l,
                                            cast<TypedAttr>(nb.getZeroAttr(type.getElementType())));
          linalg::YieldOp::create(nb, l, out);
        });
    c.replaceAllUsesWith(generic.getResult(0));
    c.erase();
  }
  return success();
}

/// Rewrites on the private copy: scalar arguments become 0-d tensor inputs (the input function
/// reads their value at index 0; evo/Conversion/ScalarArguments.h, a rewrite of the input's
/// form, not of its meaning) and tensor.concat a gathering generic (concatAsGathers); then
/// upstream's: arith/math on tensors become linalg.generic, named
/// linalg ops their generic form. linalg.softmax is not a structured op and stays.
static LogicalResult preprocess(func::FuncOp work) {
  MLIRContext *ctx = work.getContext();
  if (failed(scalarArgumentsToTensors(work, "the oracle")) || failed(concatAsGathers(work)))
    return failure();
  PassManager pm(ctx, func::FuncOp::getOperationName());
  pm.addPass(createConvertElementwiseToLinalgPass());
  if (failed(pm.run(work)))
    return failure();
  IRRewriter rewriter(ctx);
  SmallVector<linalg::LinalgOp> named;
  work.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, op)))
      return op->emitError() << "the oracle cannot generalize '" << op->getName() << "'";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

/// Estimates the payload evaluations needed for the elements of a result in a box (per dimension,
/// how many consecutive indices), by propagating boxes of needed elements from consumers to
/// producers: the footprint of a box through an indexing map is the extent of each map result
/// over the loop box. A node reached through several paths needs the per-dimension maximum of
/// their boxes (they usually overlap: `x - mean` read by both `square` and the final scale).
static double estimateCost(const Program &prog, const Source &result, ArrayRef<int64_t> box) {
  if (result.kind != SrcKind::Node)
    return 0;
  // Needed extents per node: per loop for generics (parallel loops only), per dimension for
  // softmax.
  std::vector<SmallVector<int64_t, 6>> need(prog.nodes.size());
  llvm::SmallBitVector needed(prog.nodes.size());
  auto require = [&](const Source &src, ArrayRef<int64_t> valueBox) {
    if (src.kind != SrcKind::Node)
      return;
    const ValueInfo &info = prog.values[src.index];
    const NodePlan &node = prog.nodes[info.node];
    SmallVector<int64_t, 6> &n = need[info.node];
    needed.set(info.node);
    if (node.kind != NodePlan::Kind::Generic) {
      n.resize(valueBox.size(), 0);
      for (auto [j, e] : llvm::enumerate(valueBox))
        n[j] = std::max(n[j], e);
      return;
    }
    const GenericPlan &g = node.generic;
    n.resize(g.ranges.size(), 0);
    for (auto [j, d] : llvm::enumerate(g.outputs[info.result].loopOfDim))
      if (d != kUnitDim)
        n[d] = std::max(n[d], valueBox[j]);
  };
  require(result, box);

  double cost = 0;
  for (size_t i = prog.nodes.size(); i-- > 0;) {
    if (!needed.test(i))
      continue;
    const NodePlan &node = prog.nodes[i];
    SmallVector<int64_t, 6> n = need[i];
    if (node.kind == NodePlan::Kind::Softmax) {
      const SoftmaxPlan &s = node.softmax;
      double elements = 1;
      for (int64_t e : n)
        elements *= static_cast<double>(e);
      double rows = n[s.dim] ? elements / static_cast<double>(n[s.dim]) : 0;
      cost += 3 * elements + 4 * rows * static_cast<double>(s.len);
      n[s.dim] = static_cast<int64_t>(s.len);
      require(s.input, n);
      continue;
    }
    if (node.kind == NodePlan::Kind::View) {
      const ViewPlan &v = node.view;
      double elements = 1;
      for (int64_t e : n)
        elements *= static_cast<double>(e);
      cost += elements;
      // The input's box: the same extents where dimensions correspond, else (a reshape) the
      // innermost run of as many elements.
      SmallVector<int64_t, 4> inBox(v.inShape.size(), 1);
      if (v.kind == ViewPlan::Kind::Pad) {
        for (size_t i = 0; i < inBox.size(); ++i)
          inBox[i] = std::clamp<int64_t>(n[i], 1, v.inShape[i]);
      } else if (v.kind == ViewPlan::Kind::Slice) {
        for (size_t i = 0; i < inBox.size(); ++i)
          if (v.resultDim[i] >= 0)
            inBox[i] = std::clamp<int64_t>((n[v.resultDim[i]] - 1) * v.steps[i] + 1, 1,
                                           v.inShape[i]);
      } else {
        double remaining = elements;
        for (size_t i = inBox.size(); i-- > 0 && remaining > 1;) {
          inBox[i] = std::min<int64_t>(v.inShape[i], static_cast<int64_t>(std::ceil(remaining)));
          remaining = std::ceil(remaining / static_cast<double>(inBox[i]));
        }
      }
      require(v.input, inBox);
      continue;
    }
    const GenericPlan &g = node.generic;
    double points = 1;
    for (unsigned d : g.parDims)
      points *= static_cast<double>(n[d]);
    cost += points * static_cast<double>(g.redPoints) * g.opsPerPoint;
    for (unsigned d : g.redDims)
      n[d] = g.ranges[d];
    for (const OperandPlan &in : g.inputs) {
      SmallVector<int64_t, 4> operandBox;
      for (auto [r, expr] : llvm::enumerate(in.exprs)) {
        std::optional<std::pair<int64_t, int64_t>> b = affineBounds(expr, n);
        int64_t extent = b ? b->second - b->first + 1 : in.shape[r];
        operandBox.push_back(std::clamp<int64_t>(extent, 1, std::max<int64_t>(1, in.shape[r])));
      }
      require(in.src, operandBox);
    }
    for (const GatherPlan &gather : g.gathers)
      require(gather.src, gather.shape);
    for (const OutputPlan &out : g.outputs) {
      if (!out.readInit)
        continue;
      SmallVector<int64_t, 4> initBox;
      for (unsigned d : out.loopOfDim)
        initBox.push_back(d == kUnitDim ? 1 : n[d]);
      require(out.init, initBox);
    }
  }
  return cost;
}

static void computeCosts(Program &prog) {
  for (auto [r, result] : llvm::enumerate(prog.results)) {
    SmallVector<int64_t, 4> one(prog.resultShapes[r].size(), 1);
    prog.resultCold.push_back(estimateCost(prog, result, one));
    prog.resultFull.push_back(estimateCost(prog, result, prog.resultShapes[r]));
  }
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

/// Memoized elements of one tensor: a directory of lazily allocated pages with a known-bitmap.
class Memo {
public:
  static constexpr unsigned kPageBits = 8, kPageSize = 1u << kPageBits;

  explicit Memo(uint64_t numElements) : numPages((numElements + kPageSize - 1) >> kPageBits) {}

  bool lookup(uint64_t i, Reg &out) const {
    if (pages.empty())
      return false;
    const Page *p = pages[i >> kPageBits].get();
    if (!p)
      return false;
    unsigned o = i & (kPageSize - 1);
    if (!((p->known[o >> 6] >> (o & 63)) & 1))
      return false;
    out = p->vals[o];
    return true;
  }
  void store(uint64_t i, Reg v) {
    if (pages.empty())
      pages.resize(numPages);
    std::unique_ptr<Page> &p = pages[i >> kPageBits];
    if (!p)
      p = std::make_unique<Page>();
    unsigned o = i & (kPageSize - 1);
    p->vals[o] = v;
    p->known[o >> 6] |= uint64_t(1) << (o & 63);
  }

private:
  struct Page {
    uint64_t known[kPageSize / 64] = {};
    Reg vals[kPageSize];
  };
  uint64_t numPages;
  std::vector<std::unique_ptr<Page>> pages;
};

/// Per-node working storage, allocated once per session. A node is never re-entered while it is
/// being evaluated (the program is a DAG), so one set per node suffices.
struct Scratch {
  std::vector<Reg> regs, yields;
  std::vector<int64_t> loops, offsets, odometer;
  std::vector<uint64_t> outIndex;
};

struct SessionState {
  SessionState(const Program &prog, OracleInputFn inputs);
  Reg read(const Source &src, uint64_t index);
  Reg readValue(unsigned valueId, uint64_t index);
  Reg computeGeneric(unsigned node, unsigned result, uint64_t index);
  Reg computeSoftmax(unsigned node, uint64_t index);
  Reg computeView(unsigned node, uint64_t index);
  void runPayload(const GenericPlan &g, Reg *r, const int64_t *loops);

  const Program &prog;
  OracleInputFn inputs;
  std::vector<Memo> memos;          // per value id
  std::vector<Memo> rowMax, rowSum; // per node (softmax rows)
  std::vector<Scratch> scratch;     // per node
  uint64_t payloadOps = 0, memoized = 0;
};

SessionState::SessionState(const Program &prog, OracleInputFn inputs)
    : prog(prog), inputs(std::move(inputs)) {
  memos.reserve(prog.values.size());
  for (const ValueInfo &v : prog.values)
    memos.emplace_back(v.numElements);
  scratch.resize(prog.nodes.size());
  rowMax.reserve(prog.nodes.size());
  rowSum.reserve(prog.nodes.size());
  for (auto [n, node] : llvm::enumerate(prog.nodes)) {
    uint64_t rows = node.kind == NodePlan::Kind::Softmax ? node.numElements / node.softmax.len : 0;
    rowMax.emplace_back(rows);
    rowSum.emplace_back(rows);
    if (node.kind != NodePlan::Kind::Generic)
      continue;
    const GenericPlan &g = node.generic;
    Scratch &s = scratch[n];
    s.regs.assign(g.numSlots, Reg{0.0});
    for (auto [slot, value] : g.constants)
      s.regs[slot] = value;
    s.loops.assign(g.ranges.size(), 0);
    s.offsets.assign(g.inputs.size(), 0);
    s.odometer.assign(g.redDims.size(), 0);
    s.outIndex.assign(g.outputs.size(), 0);
    s.yields.assign(g.outputs.size(), Reg{0.0});
  }
}

inline Reg SessionState::read(const Source &src, uint64_t index) {
  switch (src.kind) {
  case SrcKind::Arg:
    return fromInput(inputs(src.index, index), src.elt);
  case SrcKind::Dense:
    return prog.dense[src.index][index];
  case SrcKind::Splat:
    return src.splat;
  case SrcKind::Node:
    return readValue(src.index, index);
  case SrcKind::Empty:
    break;
  }
  llvm_unreachable("create() rejects reads of an uninitialized tensor.empty");
}

Reg SessionState::readValue(unsigned valueId, uint64_t index) {
  Reg v;
  if (memos[valueId].lookup(index, v))
    return v;
  const ValueInfo &info = prog.values[valueId];
  if (prog.nodes[info.node].kind == NodePlan::Kind::Softmax)
    return computeSoftmax(info.node, index);
  if (prog.nodes[info.node].kind == NodePlan::Kind::View)
    return computeView(info.node, index);
  return computeGeneric(info.node, info.result, index);
}

Reg SessionState::computeGeneric(unsigned node, unsigned result, uint64_t index) {
  const GenericPlan &g = prog.nodes[node].generic;
  Scratch &s = scratch[node];
  Reg *r = s.regs.data();
  int64_t *loops = s.loops.data();

  // The parallel point from the requested output's index.
  const OutputPlan &q = g.outputs[result];
  uint64_t rest = index;
  for (size_t j = q.shape.size(); j-- > 0;) {
    if (q.loopOfDim[j] != kUnitDim)
      loops[q.loopOfDim[j]] = static_cast<int64_t>(rest % q.shape[j]);
    rest /= q.shape[j];
  }
  for (unsigned d : g.redDims)
    loops[d] = 0;

  for (auto [k, out] : llvm::enumerate(g.outputs)) {
    uint64_t oi = index;
    if (k != result) {
      oi = 0;
      for (auto [j, d] : llvm::enumerate(out.loopOfDim))
        if (d != kUnitDim)
          oi += out.strides[j] * loops[d];
    }
    s.outIndex[k] = oi;
    if (out.readInit)
      r[out.slot] = read(out.init, oi);
  }

  const unsigned numInputs = g.inputs.size();
  const OperandPlan *inputs = g.inputs.data();
  int64_t *offsets = s.offsets.data();
  for (unsigned i = 0; i < numInputs; ++i) {
    if (!inputs[i].linear)
      continue;
    int64_t off = inputs[i].offset;
    for (unsigned d : g.parDims)
      off += inputs[i].coef[d] * loops[d];
    offsets[i] = off;
  }

  if (g.redPoints != 0) {
    const Inst *begin = g.insts.data(), *end = begin + g.insts.size();
    const int nr = static_cast<int>(g.redDims.size());
    int64_t *odo = s.odometer.data();
    for (int k = 0; k < nr; ++k)
      odo[k] = 0;
    const bool singleOutput = g.outputs.size() == 1;
    for (;;) {
      for (unsigned i = 0; i < numInputs; ++i) {
        const OperandPlan &in = inputs[i];
        uint64_t at;
        if (in.linear) {
          at = static_cast<uint64_t>(offsets[i]);
        } else {
          int64_t lin = 0;
          for (auto [j, expr] : llvm::enumerate(in.exprs))
            lin += in.strides[j] * evalAffine(expr, loops);
          at = static_cast<uint64_t>(lin);
        }
        r[in.slot] = read(in.src, at);
      }
      if (g.gathers.empty())
        execute(begin, end, r, loops);
      else
        runPayload(g, r, loops);
      if (singleOutput) {
        r[g.outputs[0].slot] = r[g.outputs[0].yieldSlot];
      } else {
        for (auto [k, out] : llvm::enumerate(g.outputs))
          s.yields[k] = r[out.yieldSlot];
        for (auto [k, out] : llvm::enumerate(g.outputs))
          r[out.slot] = s.yields[k];
      }
      int k = nr - 1;
      while (k >= 0 && ++odo[k] == g.redRanges[k]) {
        odo[k] = 0;
        --k;
      }
      if (k < 0)
        break;
      for (unsigned i = 0; i < numInputs; ++i)
        offsets[i] += inputs[i].linear ? inputs[i].delta[k] : 0;
      if (g.needLoops)
        for (int j = k; j < nr; ++j)
          loops[g.redDims[j]] = odo[j];
    }
    payloadOps += g.redPoints * g.opsPerPoint;
  }

  Reg value{0.0};
  for (auto [k, out] : llvm::enumerate(g.outputs)) {
    memos[out.valueId].store(s.outIndex[k], r[out.slot]);
    if (k == result)
      value = r[out.slot];
  }
  memoized += g.outputs.size();
  return value;
}

Reg SessionState::computeSoftmax(unsigned node, uint64_t index) {
  const SoftmaxPlan &p = prog.nodes[node].softmax;
  uint64_t outer = index / (p.stride * p.len), inner = index % p.stride;
  uint64_t row = outer * p.stride + inner, base = outer * p.stride * p.len + inner;
  Reg max{0.0}, sum{0.0};
  if (!rowMax[node].lookup(row, max)) {
    double m = -std::numeric_limits<double>::infinity();
    for (uint64_t j = 0; j < p.len; ++j)
      m = maximumF(m, read(p.input, base + j * p.stride).f);
    double total = 0;
    for (uint64_t j = 0; j < p.len; ++j)
      total += std::exp(read(p.input, base + j * p.stride).f - m);
    max.f = m;
    sum.f = total;
    rowMax[node].store(row, max);
    rowSum[node].store(row, sum);
    payloadOps += 4 * p.len;
  } else {
    rowSum[node].lookup(row, sum);
  }
  Reg value;
  value.f = std::exp(read(p.input, index).f - max.f) / sum.f;
  payloadOps += 3;
  memos[p.valueId].store(index, value);
  ++memoized;
  return value;
}

/// The payload with its gathers: the instructions between two gathers run as one block.
void SessionState::runPayload(const GenericPlan &g, Reg *r, const int64_t *loops) {
  const Inst *begin = g.insts.data(), *end = begin + g.insts.size();
  while (begin != end) {
    const Inst *stop = begin;
    while (stop != end && stop->op != Op::Gather)
      ++stop;
    execute(begin, stop, r, loops);
    if (stop == end)
      return;
    const GatherPlan &gather = g.gathers[stop->a];
    int64_t linear = 0;
    for (auto [d, slot] : llvm::enumerate(gather.indexSlots))
      linear += std::clamp<int64_t>(r[slot].i, 0, gather.shape[d] - 1) * gather.strides[d];
    r[stop->d] = read(gather.src, static_cast<uint64_t>(linear));
    begin = stop + 1;
  }
}

Reg SessionState::computeView(unsigned node, uint64_t index) {
  const ViewPlan &v = prog.nodes[node].view;
  if (v.kind == ViewPlan::Kind::Reshape)
    return read(v.input, index);
  // The result's indices, innermost last.
  SmallVector<int64_t, 4> at(v.shape.size());
  uint64_t rest = index;
  for (size_t j = v.shape.size(); j-- > 0;) {
    at[j] = static_cast<int64_t>(rest % v.shape[j]);
    rest /= v.shape[j];
  }
  int64_t linear = 0;
  for (size_t i = 0; i < v.inShape.size(); ++i) {
    int64_t x;
    if (v.kind == ViewPlan::Kind::Slice) {
      x = v.offsets[i] + (v.resultDim[i] < 0 ? 0 : v.steps[i] * at[v.resultDim[i]]);
    } else {
      x = at[i] - v.low[i];
      if (x < 0 || x >= v.inShape[i])
        return v.padValue;
    }
    linear += x * v.inStrides[i];
  }
  return read(v.input, static_cast<uint64_t>(linear));
}

} // namespace oracle_detail

//===----------------------------------------------------------------------===//
// Oracle
//===----------------------------------------------------------------------===//

using namespace oracle_detail;

Oracle::Oracle(std::unique_ptr<Program> program) : program(std::move(program)) {}
Oracle::~Oracle() = default;

FailureOr<std::unique_ptr<Oracle>> Oracle::create(func::FuncOp func) {
  if (func.isExternal())
    return func.emitError("the oracle needs a function with a body");
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
  auto work = cast<func::FuncOp>(func->clone());
  scratch->push_back(work);
  if (failed(preprocess(work)))
    return failure();
  auto prog = std::make_unique<Program>();
  if (failed(ProgramBuilder(*prog).build(work)))
    return failure();
  computeCosts(*prog);
  return std::unique_ptr<Oracle>(new Oracle(std::move(prog)));
}

unsigned Oracle::getNumArguments() const { return program->argShapes.size(); }
ArrayRef<int64_t> Oracle::getArgumentShape(unsigned arg) const { return program->argShapes[arg]; }
unsigned Oracle::getNumResults() const { return program->results.size(); }
ArrayRef<int64_t> Oracle::getResultShape(unsigned result) const {
  return program->resultShapes[result];
}
uint64_t Oracle::getResultNumElements(unsigned result) const {
  return program->resultSizes[result];
}
double Oracle::costPerElement(unsigned result) const {
  return std::max(1.0, program->resultCold[result]);
}
double Oracle::costOfAllElements(unsigned result) const {
  return std::max(static_cast<double>(program->resultSizes[result]), program->resultFull[result]);
}

Oracle::Session Oracle::session(OracleInputFn inputs) const {
  return Session(std::make_unique<SessionState>(*program, std::move(inputs)));
}

Oracle::Session::Session(std::unique_ptr<SessionState> state) : state(std::move(state)) {}
Oracle::Session::Session(Session &&) noexcept = default;
Oracle::Session &Oracle::Session::operator=(Session &&) noexcept = default;
Oracle::Session::~Session() = default;

double Oracle::Session::valueAt(unsigned result, uint64_t linearIndex) {
  const Program &prog = state->prog;
  if (result >= prog.results.size() || linearIndex >= prog.resultSizes[result])
    llvm::report_fatal_error("evo oracle: result or element index out of range");
  const Source &src = prog.results[result];
  return toDouble(state->read(src, linearIndex), src.elt);
}

double Oracle::Session::valueAt(unsigned result, ArrayRef<int64_t> index) {
  const Program &prog = state->prog;
  if (result >= prog.results.size() || index.size() != prog.resultShapes[result].size())
    llvm::report_fatal_error("evo oracle: result index or rank mismatch");
  uint64_t linear = 0;
  for (auto [i, extent] : llvm::zip_equal(index, prog.resultShapes[result])) {
    if (i < 0 || i >= extent)
      llvm::report_fatal_error("evo oracle: element index out of range");
    linear = linear * static_cast<uint64_t>(extent) + static_cast<uint64_t>(i);
  }
  return valueAt(result, linear);
}

uint64_t Oracle::Session::getNumPayloadOps() const { return state->payloadOps; }
uint64_t Oracle::Session::getNumMemoizedElements() const { return state->memoized; }

} // namespace evo
