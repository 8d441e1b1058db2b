#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace dfmpc::cli {

std::string FormatDuration(double seconds) {
  const long long s = std::llround(std::max(0.0, seconds));
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%lld s", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%lld min %02lld s", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%lld h %02lld min", s / 3600, s % 3600 / 60);
  }
  return text;
}

ProgressBar::ProgressBar(std::string label, long long total, std::string unit)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      terminal_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double ProgressBar::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double ProgressBar::Rate(long long done) const {
  const double seconds = Seconds();
  return seconds > 0.0 ? done / seconds : 0.0;
}

void ProgressBar::Update(long long done, const std::string& note) {
  last_done_ = done;
  const auto now = std::chrono::steady_clock::now();
  const auto interval = terminal_ ? std::chrono::milliseconds(200) : std::chrono::seconds(5);
  if (now - last_draw_ < interval) return;
  last_draw_ = now;
  Draw(done, note, /*final=*/false);
}

void ProgressBar::Finish(const std::string& note) { Draw(last_done_, note, /*final=*/true); }

void ProgressBar::Draw(long long done, const std::string& note, bool final) {
  constexpr int kWidth = 30;
  const int filled = total_ > 0 ? static_cast<int>(kWidth * done / total_) : kWidth;
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  const double rate = Rate(done);
  std::string time = "ETA -";
  if (final) {
    time = "in " + FormatDuration(Seconds());
  } else if (rate > 0.0) {
    time = "ETA " + FormatDuration((total_ - done) / rate);
  }
  std::fprintf(stderr, "%s%s [%s] %lld/%lld %s, %.0f %s/s, %s%s%s%s", terminal_ ? "\r" : "",
               label_.c_str(), bar.c_str(), done, total_, unit_.c_str(), rate, unit_.c_str(),
               time.c_str(), note.empty() ? "" : ", ", note.c_str(),
               terminal_ && !final ? "    " : "\n");
  std::fflush(stderr);
}

}  // namespace dfmpc::cli
