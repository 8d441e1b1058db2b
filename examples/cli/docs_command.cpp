// dfmpc docs: rewrites (or with --check, checks) the generated blocks of
// Markdown files: tables from CSV files, code listings, the option table.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "atomic_file.h"
#include "commands.h"
#include "generated_docs.h"

namespace dfmpc::cli {
namespace {

struct DocsOptions {
  std::vector<std::string> files;
  std::string root = ".";
  bool check = false;
};

void RunDocs(const DocsOptions& o) {
  int stale_files = 0;
  for (const std::string& path : o.files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    RegeneratedDocument document;
    try {
      document = RegenerateBlocks(text.str(), o.root);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(path + ": " + error.what());
    }
    if (document.stale.empty()) {
      std::printf("%s: up to date\n", path.c_str());
      continue;
    }
    ++stale_files;
    for (const std::string& header : document.stale) {
      std::printf("%s: %s %s\n", path.c_str(), o.check ? "stale:" : "rewrote", header.c_str());
    }
    if (!o.check) internal::WriteFileAtomically(path, document.text);
  }
  if (o.check && stale_files > 0) {
    throw std::runtime_error(std::to_string(stale_files) +
                             " file(s) disagree with their sources; `dfmpc docs FILE...` "
                             "regenerates them");
  }
}

}  // namespace

void AddDocsCommand(CLI::App& app) {
  auto options = std::make_shared<DocsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "docs", "Regenerate the generated blocks of Markdown files (tables from CSVs, snippets)");
  cmd->footer(
      "A block is written between '<!-- generated: KIND ARGS -->' and '<!-- end generated -->'. "
      "Kinds: report CSV [robustness] (the tables of `dfmpc report`), csv CSV (a CSV as a "
      "table), snippet FILE (a code listing), packages SCRIPT (a PACKAGES=( ) array), options "
      "(the planner's option table). Paths are relative to --root.");
  cmd->add_option("files", options->files, "Markdown files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--root", options->root, "directory the blocks' paths are relative to")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  cmd->add_flag("--check", options->check,
                "change nothing; exit with status 1 if a block differs from its source");
  cmd->callback([options] { RunDocs(*options); });
}

}  // namespace dfmpc::cli
