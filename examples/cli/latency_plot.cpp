#include "latency_plot.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace dfmpc::cli {
namespace {

// The position of `value` in `order`, appended when new.
std::size_t IndexOf(std::vector<std::string>& order, const std::string& value) {
  const auto found = std::find(order.begin(), order.end(), value);
  if (found != order.end()) return static_cast<std::size_t>(found - order.begin());
  order.push_back(value);
  return order.size() - 1;
}

}  // namespace

std::vector<plot::Panel> ReturnAgainstLatencyPanels(const std::vector<SummaryRow>& rows) {
  std::vector<std::string> tasks, labels;
  std::map<std::pair<std::size_t, std::size_t>, const SummaryRow*> latest;  // (task, label)
  for (const SummaryRow& row : rows) {
    if (!row.perturbation.empty() || !row.latency_p50_ms || !row.latency_p99_ms) continue;
    latest[{IndexOf(tasks, row.task), IndexOf(labels, row.label)}] = &row;
  }
  if (latest.empty()) {
    throw std::invalid_argument(
        "no unperturbed run in the summary has latency figures (model policies record them)");
  }
  std::vector<plot::Panel> panels;
  for (std::size_t task = 0; task < tasks.size(); ++task) {
    plot::Panel panel{tasks[task] + ": return against latency per control step (p50 to p99)",
                      "ms per control step", "mean return", false, {}};
    for (std::size_t label = 0; label < labels.size(); ++label) {
      const auto found = latest.find({task, label});
      if (found == latest.end()) continue;
      const SummaryRow& row = *found->second;
      panel.series.push_back({labels[label],
                              {*row.latency_p50_ms, *row.latency_p99_ms},
                              {row.return_mean, row.return_mean},
                              /*mark_points=*/true});
    }
    panels.push_back(std::move(panel));
  }
  return panels;
}

}  // namespace dfmpc::cli
