// Generated blocks of Markdown files: a table, a code listing or a list
// whose source is a file in the repository (or the planner's option table),
// written between markers so that a number or a snippet lives in one place:
//
//   <!-- generated: KIND ARGUMENTS -->
//   ...text the tool writes...
//   <!-- end generated -->
//
// Kinds:
//   report CSV [robustness]  the tables of `dfmpc report` for an eval summary
//   csv CSV                  a CSV file as a Markdown table, as it is
//   snippet FILE             a fenced code listing of FILE
//   packages SCRIPT          the Debian packages a script's PACKAGES=( ) lists
//   options                  the planner's option table (key, flag, default, range, doc)
#ifndef DFMPC_EXAMPLES_CLI_GENERATED_DOCS_H_
#define DFMPC_EXAMPLES_CLI_GENERATED_DOCS_H_

#include <string>
#include <vector>

namespace dfmpc::cli {

// The text of one block of `kind` with `arguments`, file paths relative to
// `root`. Throws std::invalid_argument for an unknown kind or bad
// arguments, std::runtime_error for a file that cannot be read.
std::string GenerateBlock(const std::vector<std::string>& kind_and_arguments,
                          const std::string& root);

struct RegeneratedDocument {
  std::string text;
  std::vector<std::string> stale;  // the header of each block that changed
};

// `markdown` with every generated block rewritten. Throws
// std::invalid_argument naming the line of a marker without its end.
RegeneratedDocument RegenerateBlocks(const std::string& markdown, const std::string& root);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_GENERATED_DOCS_H_
