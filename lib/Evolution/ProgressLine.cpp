//===- ProgressLine.cpp - one live status line on stderr -------------------===//
//
// The line is redrawn in place ("\r" + erase to end of line) and only on a terminal: in a log
// file or a pipe, hundreds of redraws would be noise, and the run store already has the facts.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/RunStore.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdio>

using namespace evo;

namespace {
/// At most ~10 redraws a second: an evaluation callback may fire far more often, and a faster
/// redraw only costs terminal bandwidth without being readable.
constexpr std::chrono::milliseconds kMinRedrawInterval(100);
} // namespace

ProgressLine::ProgressLine(bool quiet)
    : on(!quiet && llvm::sys::Process::StandardErrIsDisplayed()) {}

ProgressLine::~ProgressLine() { finish(); }

std::string ProgressLine::formatEta(double seconds) {
  if (!(seconds >= 0) || std::isinf(seconds))
    return "";
  long long s = std::llround(seconds);
  char buf[48];
  if (s < 60)
    std::snprintf(buf, sizeof(buf), "%llds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", s / 60, s % 60);
  else // seconds no longer matter at this scale
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", (s + 30) / 3600, (s + 30) / 60 % 60);
  return buf;
}

std::string ProgressLine::format(llvm::StringRef task, int generation, int generations,
                                 int evaluated, int valid, double bestSpeedup, double etaSeconds) {
  std::string line;
  llvm::raw_string_ostream os(line);
  os << task;
  if (generations > 0)
    os << " | gen " << generation << "/" << generations;
  os << " | " << evaluated << " evaluated";
  if (evaluated > 0)
    os << " | " << llvm::formatv("{0:F0}", 100.0 * valid / evaluated) << "% valid";
  if (bestSpeedup > 0 && std::isfinite(bestSpeedup))
    os << " | best " << llvm::formatv("{0:F2}", bestSpeedup) << "x";
  std::string eta = formatEta(etaSeconds);
  if (!eta.empty())
    os << " | ETA " << eta;
  return line;
}

void ProgressLine::update(llvm::StringRef task, int generation, int generations, int evaluated,
                          int valid, double bestSpeedup, double etaSeconds) {
  if (!on)
    return;
  pending = format(task, generation, generations, evaluated, valid, bestSpeedup, etaSeconds);
  auto now = std::chrono::steady_clock::now();
  if (drawn && now - lastDraw < kMinRedrawInterval)
    return; // finish() draws the newest line if no later update does
  draw(pending);
  pending.clear();
  lastDraw = now;
}

void ProgressLine::draw(llvm::StringRef text) {
  // A line that wraps cannot be redrawn with "\r": cut it to the terminal's width.
  unsigned columns = llvm::sys::Process::StandardErrColumns();
  if (columns > 1 && text.size() >= columns)
    text = text.take_front(columns - 1);
  std::string out = "\r" + text.str() + "\x1b[K";
  llvm::errs() << out; // one write, so the line never appears half-drawn
  llvm::errs().flush();
  drawn = true;
}

void ProgressLine::finish() {
  if (!on)
    return;
  if (!pending.empty()) {
    draw(pending);
    pending.clear();
  }
  if (drawn)
    llvm::errs() << "\n";
  drawn = false;
}
