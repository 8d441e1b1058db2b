// Finds deadlines that land a step in a narrow band of outcomes (cut short,
// refresh postponed) between "too short to start" and "long enough for the
// whole step". The band's width is the difference of two of the planner's
// own predictions, which move with the machine's load, so a fixed grid of
// deadlines scaled from one measured step can step over it (under ASan on a
// busy CI machine it did). Bisecting on the outcome follows the band
// wherever it is.
//
// A step whose model call stopped between blocks says only that the planner
// misjudged its time at that deadline: the call it chose could have been the
// whole step's (the deadline above the band) or the band's own (the deadline
// in it, the call slower than predicted). The bounds stay and the next
// deadline halves the distance to the shortest one, so a stop above the band
// does not push the search past it (on a busy CI machine it did).
#ifndef DFMPC_TESTS_PLANNER_DEADLINE_SEARCH_H_
#define DFMPC_TESTS_PLANNER_DEADLINE_SEARCH_H_

#include <functional>
#include <string>

namespace dfmpc::planner {

enum class DeadlineOutcome {
  kTooShort,    // the step was deferred: shorten no further
  kSought,      // the outcome under test
  kLongEnough,  // the whole step ran: lengthen no further
  kStopped,     // a model call stopped at the deadline: no bound moves
};

// Runs `step(deadline_ms)` up to `trials` times, bisecting between 0 and
// `longest_ms` (doubled while even that is too short), and returns how many
// runs were kSought, stopping at `wanted`. A sought deadline is tried again,
// since the band is where it was found. When the bounds close in to 2% of
// the range without finding it, the band moved while they closed (a busy
// machine slowed the steps that set one bound and not the other), and the
// search starts over from the whole range. `trace`, when given, receives
// each deadline and its outcome, for a failure's message.
inline int SearchDeadlines(double longest_ms, int trials, int wanted,
                           const std::function<DeadlineOutcome(double)>& step,
                           std::string* trace = nullptr) {
  double range_ms = longest_ms;
  double shortest_ms = 0.0;
  double deadline_ms = longest_ms;
  int sought = 0;
  for (int trial = 0; trial < trials && sought < wanted; ++trial) {
    const DeadlineOutcome outcome = step(deadline_ms);
    if (trace) {
      static constexpr const char* kNames[] = {"too short", "sought", "long enough", "stopped"};
      *trace += std::to_string(deadline_ms) + " ms: " + kNames[static_cast<int>(outcome)] + "\n";
    }
    switch (outcome) {
      case DeadlineOutcome::kTooShort:
        shortest_ms = deadline_ms;
        if (deadline_ms >= longest_ms) {
          longest_ms *= 2.0;
          range_ms = longest_ms;
          deadline_ms = longest_ms;
          continue;
        }
        break;
      case DeadlineOutcome::kSought:
        ++sought;
        continue;
      case DeadlineOutcome::kLongEnough:
        longest_ms = deadline_ms;
        break;
      case DeadlineOutcome::kStopped:
        deadline_ms = 0.5 * (shortest_ms + deadline_ms);
        continue;
    }
    if (longest_ms - shortest_ms < 0.02 * range_ms) {
      shortest_ms = 0.0;
      longest_ms = range_ms;
    }
    deadline_ms = 0.5 * (shortest_ms + longest_ms);
  }
  return sought;
}

}  // namespace dfmpc::planner

#endif  // DFMPC_TESTS_PLANNER_DEADLINE_SEARCH_H_
