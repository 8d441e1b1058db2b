#include "training_plot.h"

#include <cstdio>

#include "plot/plot.h"
#include "table.h"

namespace dfmpc::cli {

std::function<void(const worldmodel::TrainProgress&)> ShowTrainingProgress(ProgressBar& bar) {
  return [&bar](const worldmodel::TrainProgress& p) {
    char note[96];
    std::snprintf(note, sizeof note, "loss %.4f, %.0f tokens/s", p.loss, p.tokens_per_second);
    bar.Update(p.step, note);
  };
}

void WriteTrainingPlot(const std::string& path, const std::vector<worldmodel::TrainLogRow>& log,
                       const std::string& title) {
  plot::Series train{"train", {}, {}}, validation{"validation (EMA weights)", {}, {}};
  for (const auto& row : log) {
    train.x.push_back(row.step);
    train.y.push_back(row.train_loss);
    validation.x.push_back(row.step);
    validation.y.push_back(row.validation_loss);
  }
  plot::Panel panel{title, "step", "loss (MSE of the target)", true, {train, validation}};
  plot::WritePlotPng(path, {panel});
}

void WriteTrainingCsv(const std::string& path, const std::vector<worldmodel::TrainLogRow>& log) {
  Table table({"step", "train_loss", "validation_loss", "learning_rate", "tokens_per_second"});
  for (const auto& row : log) {
    table.AddRow({std::to_string(row.step), FormatFixed(row.train_loss, 6),
                  FormatFixed(row.validation_loss, 6), FormatFixed(row.learning_rate, 8),
                  FormatFixed(row.tokens_per_second, 1)});
  }
  table.WriteCsv(path);
}

}  // namespace dfmpc::cli
