#include "table.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "atomic_file.h"

namespace dfmpc::cli {
namespace {

// Characters of UTF-8 `text` (bytes that do not continue a character).
size_t DisplayWidth(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

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
    widths[c] = DisplayWidth(header_[c]);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      out << (c ? "  " : "") << std::string(widths[c] - DisplayWidth(cells[c]), ' ') << cells[c];
    }
    out << '\n';
  };
  line(header_);
  for (const auto& row : rows_) line(row);
}

void Table::PrintMarkdown(std::ostream& out) const {
  auto line = [&](const std::vector<std::string>& cells) {
    for (const std::string& cell : cells) out << "| " << cell << ' ';
    out << "|\n";
  };
  line(header_);
  line(std::vector<std::string>(header_.size(), "---"));
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
