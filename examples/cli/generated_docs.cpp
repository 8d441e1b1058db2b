#include "generated_docs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/planner/option_table.h"
#include "report.h"
#include "robustness_report.h"
#include "summary.h"

namespace dfmpc::cli {
namespace {

constexpr char kBegin[] = "<!-- generated:";
constexpr char kEnd[] = "<!-- end generated -->";

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, separator)) fields.push_back(field);
  if (!line.empty() && line.back() == separator) fields.emplace_back();
  return fields;
}

std::string MarkdownRow(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const std::string& cell : cells) row += " " + cell + " |";
  return row + "\n";
}

// A CSV file (unquoted fields, as the tool's CSVs are) as a Markdown table.
std::string CsvTable(const std::string& path) {
  std::istringstream in(ReadText(path));
  std::string line, table;
  std::size_t columns = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF line ends
    if (line.empty()) continue;
    if (line.find('"') != std::string::npos) {
      throw std::invalid_argument(path + ":" + std::to_string(number) +
                                  ": quoted CSV fields are not supported");
    }
    const std::vector<std::string> cells = Split(line, ',');
    if (columns == 0) {
      columns = cells.size();
      table += MarkdownRow(cells) + MarkdownRow(std::vector<std::string>(columns, "---"));
      continue;
    }
    if (cells.size() != columns) {
      throw std::invalid_argument(path + ":" + std::to_string(number) + ": " +
                                  std::to_string(cells.size()) + " fields, the header has " +
                                  std::to_string(columns));
    }
    table += MarkdownRow(cells);
  }
  if (columns == 0) throw std::invalid_argument(path + ": empty CSV file");
  return table;
}

std::string Snippet(const std::string& path, const std::string& shown_path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  const std::string language = extension == ".py"     ? "python"
                               : extension == ".sh"   ? "bash"
                               : extension == ".toml" ? "toml"
                                                      : "cpp";
  std::string text = ReadText(path);
  if (!text.empty() && text.back() != '\n') text += '\n';
  return "```" + language + "\n" + text + "```\n";
}

// The words of a bash array PACKAGES=( ... ), comments dropped.
std::string Packages(const std::string& path) {
  const std::string script = ReadText(path);
  const std::size_t start = script.find("PACKAGES=(");
  const std::size_t end = script.find(')', start);
  if (start == std::string::npos || end == std::string::npos) {
    throw std::invalid_argument(path + ": no PACKAGES=( ... ) array");
  }
  std::istringstream lines(script.substr(start + 10, end - start - 10));
  std::string line, list;
  while (std::getline(lines, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string word;
    while (words >> word) list += (list.empty() ? "`" : " `") + word + "`";
  }
  return list + "\n";
}

std::string OptionsTable() {
  std::string table = MarkdownRow({"key", "flag", "default", "range", "in task files", "meaning"}) +
                      MarkdownRow(std::vector<std::string>(6, "---"));
  for (const planner::OptionDescriptor& option : planner::PlannerOptionTable()) {
    std::string doc = option.doc;
    std::replace(doc.begin(), doc.end(), '|', '/');
    table += MarkdownRow({"`" + std::string(option.key) + "`", "`--" + option.flag + "`",
                          "`" + option.DefaultText() + "`", option.RangeText(),
                          option.per_task ? "yes" : "no", doc});
  }
  return table;
}

void RequireArguments(const std::vector<std::string>& words, std::size_t low, std::size_t high) {
  if (words.size() < low || words.size() > high) {
    throw std::invalid_argument(
        "generated block '" + words[0] + "' takes " + std::to_string(low - 1) +
        (high > low ? " or " + std::to_string(high - 1) : "") + " argument(s)");
  }
}

}  // namespace

std::string GenerateBlock(const std::vector<std::string>& words, const std::string& root) {
  if (words.empty()) throw std::invalid_argument("a generated block names no kind");
  const std::string& kind = words[0];
  const auto file = [&](std::size_t i) {
    return (std::filesystem::path(root) / words[i]).string();
  };
  if (kind == "report") {
    RequireArguments(words, 2, 3);
    const std::vector<SummaryRow> rows = ReadSummary(file(1));
    std::ostringstream text;
    if (words.size() == 3) {
      if (words[2] != "robustness") {
        throw std::invalid_argument("generated block 'report': unknown variant '" + words[2] +
                                    "' (expected robustness)");
      }
      RobustnessReport(rows).PrintMarkdown(text);
    } else {
      Report(rows).PrintMarkdown(text);
    }
    return text.str();
  }
  if (kind == "csv") {
    RequireArguments(words, 2, 2);
    return CsvTable(file(1));
  }
  if (kind == "snippet") {
    RequireArguments(words, 2, 2);
    return Snippet(file(1), words[1]);
  }
  if (kind == "packages") {
    RequireArguments(words, 2, 2);
    return Packages(file(1));
  }
  if (kind == "options") {
    RequireArguments(words, 1, 1);
    return OptionsTable();
  }
  throw std::invalid_argument("unknown generated block '" + kind +
                              "' (expected report, csv, snippet, packages or options)");
}

RegeneratedDocument RegenerateBlocks(const std::string& markdown, const std::string& root) {
  RegeneratedDocument result;
  std::size_t position = 0;
  while (true) {
    const std::size_t begin = markdown.find(kBegin, position);
    if (begin == std::string::npos) break;
    const std::size_t header_end = markdown.find("-->", begin);
    const std::size_t body = markdown.find('\n', header_end);
    const std::size_t end = markdown.find(kEnd, begin);
    const int line =
        1 + static_cast<int>(std::count(markdown.begin(), markdown.begin() + begin, '\n'));
    if (header_end == std::string::npos || body == std::string::npos || end == std::string::npos ||
        end < body) {
      throw std::invalid_argument("line " + std::to_string(line) + ": a generated block without '" +
                                  kEnd + "' on a line of its own below it");
    }
    const std::string header = markdown.substr(begin, header_end + 3 - begin);
    std::istringstream words_in(
        markdown.substr(begin + sizeof(kBegin) - 1, header_end - begin - (sizeof(kBegin) - 1)));
    std::vector<std::string> words;
    for (std::string word; words_in >> word;) words.push_back(word);
    std::string generated;
    try {
      generated = GenerateBlock(words, root);
    } catch (const std::exception& error) {
      throw std::invalid_argument("line " + std::to_string(line) + ": " + error.what());
    }
    if (markdown.compare(body + 1, end - body - 1, generated) != 0) result.stale.push_back(header);
    result.text += markdown.substr(position, body + 1 - position) + generated;
    position = end;
  }
  result.text += markdown.substr(position);
  return result;
}

}  // namespace dfmpc::cli
