#include "summary.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "atomic_file.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

std::string Join(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + fields[i];
  return line;
}

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> fields(1);
  for (const char c : line) {
    if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// The columns that older summaries lack, and are read without.
bool IsLaterColumn(const std::string& column) {
  return column == "perturbation" || column == "mean_abs_da" || column == "mean_abs_a";
}

std::string FormatOptional(const std::optional<double>& value) {
  return value ? FormatFixed(*value, 3) : "";
}

std::string RowLine(const SummaryRow& row) {
  return Join({row.task, row.policy, row.label, std::to_string(row.episodes),
               std::to_string(row.seed), std::to_string(row.action_repeat),
               FormatFixed(row.return_mean, 3), FormatFixed(row.return_std, 3),
               FormatOptional(row.success_rate), FormatOptional(row.latency_p50_ms),
               FormatOptional(row.latency_p99_ms), row.perturbation,
               FormatOptional(row.action_change), FormatOptional(row.action_magnitude)});
}

std::string ReadText(const std::string& path) {
  if (!std::filesystem::exists(path)) throw std::invalid_argument(path + ": file does not exist");
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file) throw std::invalid_argument(path + ": cannot read the file");
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// The fields of one data line, read by column name; errors name the place.
class FieldReader {
 public:
  FieldReader(const std::map<std::string, std::size_t>& columns, std::vector<std::string> fields,
              std::string where)
      : columns_(columns), fields_(std::move(fields)), where_(std::move(where)) {}

  bool Has(const std::string& column) const { return columns_.count(column) > 0; }

  std::string Text(const std::string& column) const {
    const std::string& text = Field(column);
    if (text.empty()) throw Error(column, "empty");
    return text;
  }

  const std::string& Field(const std::string& column) const { return fields_[columns_.at(column)]; }

  std::optional<double> OptionalNumber(const std::string& column) const {
    const std::string& text = Field(column);
    if (text.empty()) return std::nullopt;
    double value = 0.0;
    if (!Parses(text, value) || !std::isfinite(value)) {
      throw Error(column, "'" + text + "' is not a finite number");
    }
    return value;
  }

  double Number(const std::string& column) const {
    const std::optional<double> value = OptionalNumber(column);
    if (!value) throw Error(column, "empty");
    return *value;
  }

  template <typename Integer>
  Integer WholeNumber(const std::string& column, Integer min) const {
    const std::string& text = Field(column);
    Integer value = 0;
    if (!Parses(text, value) || value < min) {
      throw Error(column, "'" + text + "' is not a whole number >= " + std::to_string(min));
    }
    return value;
  }

 private:
  template <typename T>
  static bool Parses(const std::string& text, T& value) {
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    return error == std::errc() && stop == end;
  }

  std::invalid_argument Error(const std::string& column, const std::string& problem) const {
    return std::invalid_argument(where_ + ", column " + column + ": " + problem);
  }

  const std::map<std::string, std::size_t>& columns_;
  std::vector<std::string> fields_;
  std::string where_;
};

SummaryRow ParseRow(const FieldReader& fields) {
  SummaryRow row;
  row.task = fields.Text("task");
  row.policy = fields.Text("policy");
  row.label = fields.Text("label");
  row.episodes = fields.WholeNumber("episodes", 1);
  row.seed = fields.WholeNumber<std::uint64_t>("seed", 0);
  row.action_repeat = fields.WholeNumber("action_repeat", 1);
  row.return_mean = fields.Number("return_mean");
  row.return_std = fields.Number("return_std");
  row.success_rate = fields.OptionalNumber("success_rate");
  row.latency_p50_ms = fields.OptionalNumber("latency_p50_ms");
  row.latency_p99_ms = fields.OptionalNumber("latency_p99_ms");
  if (fields.Has("perturbation")) row.perturbation = fields.Field("perturbation");
  if (fields.Has("mean_abs_da")) row.action_change = fields.OptionalNumber("mean_abs_da");
  if (fields.Has("mean_abs_a")) row.action_magnitude = fields.OptionalNumber("mean_abs_a");
  return row;
}

// The rows of a summary file's `text` (none for a bare header).
std::vector<SummaryRow> ParseSummary(const std::string& text, const std::string& path) {
  const std::vector<std::string> lines = Lines(text);
  if (lines.empty()) throw std::invalid_argument(path + ": empty file, no header");
  const std::vector<std::string> header = Split(lines[0]);
  std::map<std::string, std::size_t> columns;
  for (std::size_t c = 0; c < header.size(); ++c) columns.emplace(header[c], c);
  for (const std::string& column : SummaryColumns()) {
    if (!columns.count(column) && !IsLaterColumn(column)) {
      throw std::invalid_argument(path + ": missing column '" + column + "' in the header");
    }
  }
  std::vector<SummaryRow> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const std::string where = path + " line " + std::to_string(i + 1);
    std::vector<std::string> fields = Split(lines[i]);
    if (fields.size() != header.size()) {
      throw std::invalid_argument(where + ": " + std::to_string(fields.size()) +
                                  " fields, the header has " + std::to_string(header.size()));
    }
    rows.push_back(ParseRow(FieldReader(columns, std::move(fields), where)));
  }
  return rows;
}

}  // namespace

const std::vector<std::string>& SummaryColumns() {
  static const std::vector<std::string> columns = {
      "task",           "policy",       "label",       "episodes",     "seed",
      "action_repeat",  "return_mean",  "return_std",  "success_rate", "latency_p50_ms",
      "latency_p99_ms", "perturbation", "mean_abs_da", "mean_abs_a"};
  return columns;
}

void CheckSummaryAppendable(const std::string& path, const std::string& label) {
  if (label.empty()) throw std::invalid_argument("--label must not be empty");
  for (const char c : label) {
    if (c == ',' || c == '"' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      throw std::invalid_argument("--label '" + label +
                                  "': a summary label cannot hold a comma, a double quote or a "
                                  "control character");
    }
  }
  if (!std::filesystem::exists(path)) return;
  const std::string text = ReadText(path);
  const std::vector<std::string> lines = Lines(text);
  // An older dfmpc's header is the current one without its last columns.
  std::vector<std::string> older = SummaryColumns();
  std::string missing;
  while (IsLaterColumn(older.back())) {
    missing = older.back() + (missing.empty() ? "" : ", ") + missing;
    older.pop_back();
    if (!lines.empty() && lines[0] == Join(older)) {
      throw std::invalid_argument(path + ": written by an older dfmpc, without the columns " +
                                  missing + "; append to a new summary file");
    }
  }
  if (lines.empty() || lines[0] != Join(SummaryColumns())) {
    throw std::invalid_argument(path + ": not a dfmpc eval summary (its header is not '" +
                                Join(SummaryColumns()) + "')");
  }
  ParseSummary(text, path);
}

void AppendSummaryRow(const std::string& path, const SummaryRow& row) {
  CheckSummaryAppendable(path, row.label);
  if (row.perturbation.find_first_of(",\"\n") != std::string::npos) {
    throw std::invalid_argument("summary: perturbation text '" + row.perturbation +
                                "' holds a comma, a quote or a newline");
  }
  std::string text = std::filesystem::exists(path) ? ReadText(path) : Join(SummaryColumns()) + "\n";
  if (text.back() != '\n') text += '\n';
  internal::WriteFileAtomically(path, text + RowLine(row) + "\n");
}

std::vector<SummaryRow> ReadSummary(const std::string& path) {
  std::vector<SummaryRow> rows = ParseSummary(ReadText(path), path);
  if (rows.empty()) throw std::invalid_argument(path + ": no rows below the header");
  return rows;
}

}  // namespace dfmpc::cli
