// A one-line progress bar on stderr for long commands (collect, eval).
#ifndef DFMPC_EXAMPLES_CLI_PROGRESS_BAR_H_
#define DFMPC_EXAMPLES_CLI_PROGRESS_BAR_H_

#include <chrono>
#include <string>

namespace dfmpc::cli {

class ProgressBar {
 public:
  // `total` units (control steps) labelled `label`.
  ProgressBar(std::string label, long long total);
  // Redraws at most every 0.2 s; `note` is appended (e.g. the last return).
  void Update(long long done, const std::string& note = "");
  // Draws the final state and ends the line.
  void Finish(const std::string& note = "");
  // Units per second since construction.
  double Rate(long long done) const;

 private:
  void Draw(long long done, const std::string& note);

  std::string label_;
  long long total_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  long long last_done_ = 0;
};

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_PROGRESS_BAR_H_
