// A small text table for benchmark output, printed aligned (cells may hold
// UTF-8 text such as "±"), printed as Markdown, and written as CSV
// (atomically: a temporary file renamed into place).
#ifndef DFMPC_EXAMPLES_CLI_TABLE_H_
#define DFMPC_EXAMPLES_CLI_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace dfmpc::cli {

std::string FormatFixed(double value, int decimals);

class Table {
 public:
  explicit Table(std::vector<std::string> header);
  void AddRow(std::vector<std::string> row);
  void Print(std::ostream& out) const;
  // A GitHub-flavoured Markdown table, cells as they are (no escaping).
  void PrintMarkdown(std::ostream& out) const;
  // Throws std::runtime_error when the file cannot be written.
  void WriteCsv(const std::string& path) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_TABLE_H_
