#include "progress_bar.h"

#include <cstdio>
#include <utility>

namespace dfmpc::cli {

ProgressBar::ProgressBar(std::string label, long long total)
    : label_(std::move(label)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double ProgressBar::Rate(long long done) const {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return seconds > 0.0 ? done / seconds : 0.0;
}

void ProgressBar::Update(long long done, const std::string& note) {
  last_done_ = done;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  Draw(done, note);
}

void ProgressBar::Finish(const std::string& note) {
  Draw(last_done_, note);
  std::fputc('\n', stderr);
}

void ProgressBar::Draw(long long done, const std::string& note) {
  constexpr int kWidth = 30;
  const int filled = total_ > 0 ? static_cast<int>(kWidth * done / total_) : kWidth;
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r%s [%s] %lld/%lld steps, %.0f steps/s %s    ", label_.c_str(), bar.c_str(),
               done, total_, Rate(done), note.c_str());
  std::fflush(stderr);
}

}  // namespace dfmpc::cli
