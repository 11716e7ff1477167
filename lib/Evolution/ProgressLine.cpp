//===- ProgressLine.cpp - one live status line on stderr -------------------===//
//
// On a terminal the line is redrawn in place ("\r" + erase to end of line). In a log file or a
// pipe hundreds of redraws would be noise, yet a batch job's log must show that the run moves:
// there it is one plain line per generation of each task, and one when the task ends.
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
    : ProgressLine(quiet                                          ? Mode::Off
                   : llvm::sys::Process::StandardErrIsDisplayed() ? Mode::Terminal
                                                                  : Mode::Lines,
                   llvm::errs()) {}

ProgressLine::ProgressLine(Mode mode, llvm::raw_ostream &os)
    : mode(mode), os(&os), on(mode != Mode::Off) {}

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
  std::lock_guard<std::mutex> lock(mutex); // tasks on several GPUs report at once
  std::string line = format(task, generation, generations, evaluated, valid, bestSpeedup,
                            etaSeconds);
  if (mode == Mode::Lines) {
    TaskLine &t = lines[task.str()];
    t.newest = std::move(line);
    if (generation == t.printedGeneration)
      return; // finish() prints the newest state of the task
    *os << "evo-evolve: " << t.newest << "\n";
    os->flush();
    t.printedGeneration = generation;
    return;
  }
  pending = std::move(line);
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
  *os << out; // one write, so the line never appears half-drawn
  os->flush();
  drawn = true;
}

void ProgressLine::finish(llvm::StringRef state, llvm::StringRef task) {
  if (!on)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  if (mode == Mode::Lines) {
    for (auto it = lines.begin(); it != lines.end();) {
      if (!task.empty() && it->first != task) {
        ++it;
        continue;
      }
      *os << "evo-evolve: " << it->second.newest << (state.empty() ? "" : " | ") << state
          << "\n";
      it = lines.erase(it);
    }
    os->flush();
    return;
  }
  if (!pending.empty()) {
    draw(pending);
    pending.clear();
  }
  if (drawn)
    *os << "\n";
  drawn = false;
}
