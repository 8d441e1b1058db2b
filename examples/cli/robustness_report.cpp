#include "robustness_report.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "dfmpc/envs/perturbation.h"

namespace dfmpc::cli {
namespace {

// The summary stores the perturbation text with spaces for its commas.
std::string SpecText(const std::string& summary_text) {
  std::string text = summary_text;
  std::replace(text.begin(), text.end(), ' ', ',');
  return text;
}

std::size_t ParameterIndex(const std::string& name) {
  const std::vector<std::string>& names = envs::PerturbationNames();
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

// The one parameter a fixed perturbation sets and its value; nothing for a
// perturbation of several parameters or of a sampled range.
std::optional<std::pair<std::string, double>> SingleFixedParameter(const std::string& text) {
  if (text.find(',') != std::string::npos || text.find(':') != std::string::npos) {
    return std::nullopt;
  }
  const std::string name = text.substr(0, text.find('='));
  const std::vector<double> values =
      envs::PerturbationValues(envs::SamplePerturbation(envs::ParsePerturbation(text), 0));
  return std::make_pair(name, values[ParameterIndex(name)]);
}

std::string FormatValue(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// Appends `name` to `names` unless it is there already.
void AddOnce(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

}  // namespace

RobustnessReport::RobustnessReport(const std::vector<SummaryRow>& rows) {
  const std::vector<double> defaults = envs::PerturbationValues(envs::Perturbation{});
  std::map<std::string, std::map<std::string, SummaryRow>> nominal;  // [task][label]
  std::vector<std::string> labels;
  for (const SummaryRow& row : rows) {
    AddOnce(labels, row.label);
    const std::string text = SpecText(row.perturbation);
    std::optional<std::pair<std::string, double>> point;
    try {
      if (text.empty()) {
        nominal[row.task][row.label] = row;
        continue;
      }
      point = SingleFixedParameter(text);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("summary row of " + row.task + ", '" + row.label +
                                  "': perturbation '" + row.perturbation + "': " + e.what());
    }
    if (!point) {
      ++skipped_rows_;
      continue;
    }
    auto axis = std::find_if(axes_.begin(), axes_.end(), [&](const Axis& a) {
      return a.task == row.task && a.parameter == point->first;
    });
    if (axis == axes_.end()) {
      axes_.push_back({row.task, point->first, defaults[ParameterIndex(point->first)], {}, {}});
      axis = axes_.end() - 1;
    }
    axis->curves[row.label].points[point->second] = row;
  }
  if (axes_.empty()) {
    throw std::invalid_argument(
        "no run of the summary perturbs a single parameter (eval --perturb NAME=VALUE)");
  }
  // Tasks in order of first appearance, each one's parameters in their fixed order.
  std::vector<std::string> tasks;
  for (const SummaryRow& row : rows) AddOnce(tasks, row.task);
  const auto order = [&](const Axis& axis) {
    const auto task = std::find(tasks.begin(), tasks.end(), axis.task) - tasks.begin();
    return std::make_pair(task, ParameterIndex(axis.parameter));
  };
  std::sort(axes_.begin(), axes_.end(),
            [&](const Axis& a, const Axis& b) { return order(a) < order(b); });
  for (Axis& axis : axes_) {
    for (const auto& [label, row] : nominal[axis.task]) {
      axis.curves[label].points.emplace(axis.nominal, row);
    }
    for (const std::string& label : labels) {
      if (axis.curves.count(label)) axis.labels.push_back(label);
    }
  }
}

std::optional<double> RobustnessReport::PercentOfNominal(const Axis& axis, const std::string& label,
                                                         const SummaryRow& row) const {
  const auto& points = axis.curves.at(label).points;
  const auto found = points.find(axis.nominal);
  if (found == points.end() || found->second.return_mean <= 0.0) return std::nullopt;
  return 100.0 * row.return_mean / found->second.return_mean;
}

Table RobustnessReport::AxisTable(const Axis& axis) const {
  std::vector<double> values;
  for (const auto& [label, curve] : axis.curves) {
    for (const auto& [value, row] : curve.points) values.push_back(value);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<std::string> header = {axis.parameter};
  for (const double value : values) header.push_back(FormatValue(value));
  Table table(header);
  for (const std::string& label : axis.labels) {
    std::vector<std::string> line = {label};
    const auto& points = axis.curves.at(label).points;
    for (const double value : values) {
      const auto found = points.find(value);
      if (found == points.end()) {
        line.push_back("-");
        continue;
      }
      const SummaryRow& row = found->second;
      std::string cell = FormatFixed(row.return_mean, 1) + " ± " + FormatFixed(row.return_std, 1);
      const std::optional<double> percent = PercentOfNominal(axis, label, row);
      if (percent && value != axis.nominal) cell += " (" + FormatFixed(*percent, 0) + "%)";
      line.push_back(cell);
    }
    table.AddRow(line);
  }
  return table;
}

void RobustnessReport::Write(std::ostream& out, bool markdown) const {
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const Axis& axis = axes_[i];
    out << (i ? "\n" : "") << (markdown ? "### " : "") << axis.task << ": return against "
        << axis.parameter << " (mean ± std, % of the unperturbed return)"
        << (markdown ? "\n\n" : "\n");
    markdown ? AxisTable(axis).PrintMarkdown(out) : AxisTable(axis).Print(out);
  }
  if (skipped_rows_ > 0) {
    out << '\n'
        << skipped_rows_
        << " run(s) perturbing several parameters at once or sampling ranges are not shown.\n";
  }
}

void RobustnessReport::WriteCsv(const std::string& path) const {
  Table table({"task", "parameter", "value", "label", "episodes", "return_mean", "return_std",
               "percent_of_nominal"});
  for (const Axis& axis : axes_) {
    for (const std::string& label : axis.labels) {
      for (const auto& [value, row] : axis.curves.at(label).points) {
        const std::optional<double> percent = PercentOfNominal(axis, label, row);
        table.AddRow({axis.task, axis.parameter, FormatValue(value), label,
                      std::to_string(row.episodes), FormatFixed(row.return_mean, 3),
                      FormatFixed(row.return_std, 3), percent ? FormatFixed(*percent, 1) : ""});
      }
    }
  }
  table.WriteCsv(path);
}

std::vector<plot::Panel> RobustnessReport::Panels() const {
  std::vector<plot::Panel> panels;
  for (const Axis& axis : axes_) {
    plot::Panel panel{
        axis.task + ": return against " + axis.parameter, axis.parameter, "return", false, {}};
    for (const std::string& label : axis.labels) {
      plot::Series series{label, {}, {}};
      for (const auto& [value, row] : axis.curves.at(label).points) {
        series.x.push_back(value);
        series.y.push_back(row.return_mean);
      }
      panel.series.push_back(series);
    }
    panels.push_back(panel);
  }
  return panels;
}

}  // namespace dfmpc::cli
