#include "table.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "atomic_file.h"

namespace dfmpc::cli {

std::string FormatFixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

Table::Table(std::vector<std::string> header) : header_(std::move(header)) {}

void Table::AddRow(std::vector<std::string> row) {
  if (row.size() != header_.size()) throw std::logic_error("Table: row width mismatch");
  rows_.push_back(std::move(row));
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> widths(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) {
    widths[c] = header_[c].size();
    for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      out << (c ? "  " : "") << std::setw(static_cast<int>(widths[c])) << cells[c];
    }
    out << '\n';
  };
  line(header_);
  for (const auto& row : rows_) line(row);
}

void Table::WriteCsv(const std::string& path) const {
  std::ostringstream csv;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) csv << (c ? "," : "") << cells[c];
    csv << '\n';
  };
  line(header_);
  for (const auto& row : rows_) line(row);
  internal::WriteFileAtomically(path, csv.str());
}

}  // namespace dfmpc::cli
