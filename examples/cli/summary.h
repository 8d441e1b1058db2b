// The benchmark summary that `dfmpc eval --summary` appends to and `dfmpc
// report` reads: a CSV file, one row per evaluation run.
#ifndef DFMPC_EXAMPLES_CLI_SUMMARY_H_
#define DFMPC_EXAMPLES_CLI_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfmpc::cli {

// One evaluation run: a policy's returns over `episodes` episodes of a task.
struct SummaryRow {
  std::string task, policy;
  std::string label;  // names the run in reports, e.g. "dfmpc warm r=1"
  int episodes = 0;
  std::uint64_t seed = 0;
  int action_repeat = 1;
  double return_mean = 0.0, return_std = 0.0;
  std::optional<double> success_rate;  // in [0, 1]; for tasks with a success metric
  std::optional<double> latency_p50_ms, latency_p99_ms;  // per control step; model policies
  // The environment's perturbation in envs::FormatPerturbation's text with
  // spaces for its commas, e.g. "obs_noise=0.03 damping=1.5"; empty: none.
  std::string perturbation;
  // Mean |a_t - a_{t-1}| and mean |a| per control step and action component
  // (envs::Episode), averaged over the episodes; empty in older summaries.
  std::optional<double> action_change, action_magnitude;
};

// The header: task, policy, label, episodes, seed, action_repeat,
// return_mean, return_std, success_rate, latency_p50_ms, latency_p99_ms,
// perturbation, mean_abs_da, mean_abs_a.
const std::vector<std::string>& SummaryColumns();

// Throws std::invalid_argument, before an evaluation spends hours, when
// AppendSummaryRow could not add a row labelled `label` to `path`: the label
// is empty or holds a comma, a double quote or a control character, or
// `path` exists and is not a summary (see ReadSummary).
void CheckSummaryAppendable(const std::string& path, const std::string& label);

// Adds `row` at the end of the summary `path`, creating it with a header
// when it does not exist. The file is replaced whole (atomically), so an
// interrupted run leaves it as it was, never with half a row (but of two
// runs appending at the same time, one row may be lost). Throws as
// CheckSummaryAppendable, or std::runtime_error when it cannot be written.
void AppendSummaryRow(const std::string& path, const SummaryRow& row);

// Every row of the summary `path`, in file order. Columns are found by name
// (others are ignored); the optional ones may be empty, and summaries
// written before the perturbation column existed read as unperturbed (before
// the smoothness columns, without smoothness). Throws
// std::invalid_argument naming the file, and the line and column where there
// is one, when the file cannot be read, is empty, lacks a column, has a row
// of another width, an empty text field, a number that does not parse (or is
// not finite, or an integer that is not whole), or no rows.
std::vector<SummaryRow> ReadSummary(const std::string& path);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_SUMMARY_H_
