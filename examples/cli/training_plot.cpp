#include "training_plot.h"

#include "plot/plot.h"

namespace dfmpc::cli {

void WriteTrainingPlot(const std::string& path, const std::vector<worldmodel::TrainLogRow>& log) {
  plot::Series train{"train", {}, {}}, validation{"validation (EMA weights)", {}, {}};
  for (const auto& row : log) {
    train.x.push_back(row.step);
    train.y.push_back(row.train_loss);
    validation.x.push_back(row.step);
    validation.y.push_back(row.validation_loss);
  }
  plot::Panel panel{"Diffusion-forcing training loss", "step", "loss (MSE of the target)", true,
                    {train, validation}};
  plot::WritePlotPng(path, {panel});
}

}  // namespace dfmpc::cli
