// A one-line progress bar on stderr for long commands (collect, train, eval):
// done/total, rate, the time left and a note. On a terminal it redraws one
// line in place; into a file or pipe it writes a line every few seconds, so
// logs stay readable.
#ifndef DFMPC_EXAMPLES_CLI_PROGRESS_BAR_H_
#define DFMPC_EXAMPLES_CLI_PROGRESS_BAR_H_

#include <chrono>
#include <string>

namespace dfmpc::cli {

class ProgressBar {
 public:
  // `total` units (control steps unless `unit` says otherwise) labelled
  // `label`.
  ProgressBar(std::string label, long long total, std::string unit = "steps");
  // Redraws at most every 0.2 s (5 s off a terminal); `note` is appended
  // (e.g. the last return).
  void Update(long long done, const std::string& note = "");
  // Draws the final state and ends the line.
  void Finish(const std::string& note = "");
  // Units per second since construction.
  double Rate(long long done) const;

 private:
  void Draw(long long done, const std::string& note, bool final);
  double Seconds() const;  // since construction

  std::string label_;
  long long total_;
  std::string unit_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  long long last_done_ = 0;
};

// "42 s", "3 min 05 s" or "1 h 02 min": a duration for people.
std::string FormatDuration(double seconds);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_PROGRESS_BAR_H_
