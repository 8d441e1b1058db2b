#include "report.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace dfmpc::cli {
namespace {

constexpr char kAnchorLabel[] = "TD-MPC2 (published)";

// TD-MPC2's published returns on the DeepMind Control tasks ours follow
// (reacher: reacher-easy); not run here, shown for scale.
std::optional<double> PublishedReturn(const std::string& task) {
  static const std::map<std::string, double> returns = {
      {"pendulum_swingup", 819.0}, {"cartpole_swingup", 876.0}, {"reacher", 983.0},
      {"cheetah_run", 844.0},      {"walker_walk", 980.0},      {"walker_run", 842.0},
      {"hopper_stand", 954.0},     {"hopper_hop", 338.0}};
  const auto found = returns.find(task);
  if (found == returns.end()) return std::nullopt;
  return found->second;
}

std::size_t IndexOf(std::vector<std::string>& names, const std::string& name) {
  const auto found = std::find(names.begin(), names.end(), name);
  if (found != names.end()) return static_cast<std::size_t>(found - names.begin());
  names.push_back(name);
  return names.size() - 1;
}

std::string ReturnCell(const SummaryRow& row, int usual_episodes) {
  std::string cell = FormatFixed(row.return_mean, 1) + " ± " + FormatFixed(row.return_std, 1);
  if (row.success_rate) cell += ", " + FormatFixed(100.0 * *row.success_rate, 0) + "% success";
  if (row.episodes != usual_episodes) cell += " (n=" + std::to_string(row.episodes) + ")";
  return cell;
}

std::string Milliseconds(const std::optional<double>& value) {
  return value ? FormatFixed(*value, 2) : "-";
}

std::optional<std::string> LatencyText(const SummaryRow& row) {
  if (!row.latency_p50_ms && !row.latency_p99_ms) return std::nullopt;
  return Milliseconds(row.latency_p50_ms) + " / " + Milliseconds(row.latency_p99_ms);
}

std::optional<std::string> SmoothnessText(const SummaryRow& row) {
  if (!row.action_change || !row.action_magnitude) return std::nullopt;
  return FormatFixed(*row.action_change, 3) + " / " + FormatFixed(*row.action_magnitude, 3);
}

}  // namespace

Report::Report(const std::vector<SummaryRow>& rows) {
  for (const SummaryRow& row : rows) {
    if (!row.perturbation.empty()) {
      ++perturbed_runs_;
      continue;
    }
    const std::size_t task = IndexOf(tasks_, row.task), label = IndexOf(labels_, row.label);
    cells_.resize(tasks_.size());
    for (auto& task_cells : cells_) task_cells.resize(labels_.size());
    cells_[task][label] = row;
  }
  if (tasks_.empty()) {
    throw std::invalid_argument(
        "every run of the summary is on a perturbed environment: see report --robustness");
  }
  std::map<int, int> runs_with;  // episode count -> cells
  for (const auto& task_cells : cells_) {
    for (const auto& cell : task_cells) {
      if (cell) ++runs_with[cell->episodes];
    }
  }
  int most = 0;
  for (const auto& [episodes, count] : runs_with) {
    if (count >= most) {  // on a tie, the larger count of episodes
      most = count;
      usual_episodes_ = episodes;
    }
  }
}

bool Report::HasAnchors() const {
  return std::any_of(tasks_.begin(), tasks_.end(),
                     [](const std::string& task) { return PublishedReturn(task).has_value(); });
}

Table Report::ReturnTable() const {
  std::vector<std::string> header = {"task"};
  header.insert(header.end(), labels_.begin(), labels_.end());
  if (HasAnchors()) header.push_back(kAnchorLabel);
  Table table(header);
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    std::vector<std::string> line = {tasks_[t]};
    for (const auto& cell : cells_[t])
      line.push_back(cell ? ReturnCell(*cell, usual_episodes_) : "-");
    if (HasAnchors()) {
      const std::optional<double> anchor = PublishedReturn(tasks_[t]);
      line.push_back(anchor ? FormatFixed(*anchor, 0) : "-");
    }
    table.AddRow(line);
  }
  return table;
}

std::vector<std::size_t> Report::LabelsWith(const CellText& text) const {
  std::vector<std::size_t> labels;
  for (std::size_t l = 0; l < labels_.size(); ++l) {
    if (std::any_of(cells_.begin(), cells_.end(), [&](const auto& task_cells) {
          return task_cells[l] && text(*task_cells[l]).has_value();
        })) {
      labels.push_back(l);
    }
  }
  return labels;
}

Table Report::LabelTable(const CellText& text) const {
  const std::vector<std::size_t> labels = LabelsWith(text);
  std::vector<std::string> header = {"task"};
  for (const std::size_t l : labels) header.push_back(labels_[l]);
  Table table(header);
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    std::vector<std::string> line = {tasks_[t]};
    for (const std::size_t l : labels) {
      const std::optional<SummaryRow>& cell = cells_[t][l];
      line.push_back(cell ? text(*cell).value_or("-") : "-");
    }
    table.AddRow(line);
  }
  return table;
}

void Report::Write(std::ostream& out, bool markdown) const {
  const auto section = [&](const std::string& title, const Table& table) {
    out << (markdown ? "### " : "") << title << (markdown ? "\n\n" : "\n");
    markdown ? table.PrintMarkdown(out) : table.Print(out);
  };
  const std::string episodes =
      std::to_string(usual_episodes_) + (usual_episodes_ == 1 ? " episode" : " episodes");
  section("Return, mean ± std over " + episodes + " unless noted (n)", ReturnTable());
  if (HasAnchors()) {
    const bool reacher = std::find(tasks_.begin(), tasks_.end(), "reacher") != tasks_.end();
    out << '\n'
        << kAnchorLabel << ": TD-MPC2's published returns"
        << (reacher ? " (reacher: DMC reacher-easy)" : "") << ", not run here.\n";
  }
  if (!LabelsWith(LatencyText).empty()) {
    out << '\n';
    section("Latency per control step, ms: p50 / p99", LabelTable(LatencyText));
  }
  if (!LabelsWith(SmoothnessText).empty()) {
    out << '\n';
    section("Smoothness per control step and action component: mean |Δa| / mean |a|",
            LabelTable(SmoothnessText));
  }
  if (perturbed_runs_ > 0) {
    out << '\n'
        << perturbed_runs_
        << " run(s) on perturbed environments are not shown (report --robustness shows them).\n";
  }
}

plot::BarChart Report::ReturnChart() const {
  plot::BarChart chart;
  chart.title = "Return per episode, mean ± std";
  chart.y_label = "return";
  chart.y_min = 0.0;
  chart.y_max = 1000.0;
  chart.categories = tasks_;
  for (std::size_t l = 0; l < labels_.size(); ++l) {
    plot::BarSeries series{labels_[l], {}};
    for (const auto& task_cells : cells_) {
      const std::optional<SummaryRow>& cell = task_cells[l];
      series.bars.push_back(cell ? std::optional<plot::Bar>({cell->return_mean, cell->return_std})
                                 : std::nullopt);
    }
    chart.series.push_back(series);
  }
  if (HasAnchors()) {
    plot::BarSeries anchors{kAnchorLabel, {}, /*hatched=*/true};
    for (const std::string& task : tasks_) {
      const std::optional<double> anchor = PublishedReturn(task);
      anchors.bars.push_back(anchor ? std::optional<plot::Bar>({*anchor, 0.0}) : std::nullopt);
    }
    chart.series.push_back(anchors);
  }
  return chart;
}

}  // namespace dfmpc::cli
