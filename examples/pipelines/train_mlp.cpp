#include "train_mlp.h"

#include <algorithm>
#include <stdexcept>

#include "dataset_tokens.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/frame_tokenizer.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"

namespace dfmpc::pipelines {

MlpResult TrainMlp(const MlpJob& job, const MlpCallbacks& callbacks) {
  if (job.out.empty()) throw std::invalid_argument("train-mlp: no output file given");
  if (job.ensemble < 0) {
    throw std::invalid_argument("train-mlp: the ensemble size must be >= 0, not " +
                                std::to_string(job.ensemble));
  }
  job.trainer.Validate();
  const c10::Device device = worldmodel::ParseDevice(job.device);

  // The MLP predicts the observation change itself.
  worldmodel::FrameTokenizerCheckpoint tokenizer;
  if (!job.tokenizer.empty()) tokenizer = worldmodel::LoadFrameTokenizer(job.tokenizer);
  TrainingData data =
      LoadTrainingData(job.data, /*observation_deltas=*/false, job.validation_fraction,
                       tokenizer.model ? tokenizer.model.get() : nullptr);
  worldmodel::MlpModelInfo info;
  info.task = data.info.task;
  info.task_file = data.info.task_file;
  info.task_mjcf = data.info.task_mjcf;
  info.config.layout = data.layout;
  info.notes = job.notes;
  EpisodeSplit& split = data.split;
  const worldmodel::Normalizer normalizer = FitAndNormalize(split);
  if (callbacks.on_start) {
    callbacks.on_start(info.task, split.train.size(), split.validation.size(),
                       info.config.layout.token_dim());
  }

  MlpResult result;
  result.members = std::max(1, job.ensemble);
  std::vector<worldmodel::MlpDynamics> trained;
  std::vector<std::uint64_t> seeds;
  for (int m = 0; m < result.members; ++m) {
    worldmodel::MlpTrainOptions trainer = job.trainer;
    trainer.seed = job.trainer.seed + m;
    trained.emplace_back(info.config, trainer.seed);  // initial weights from the seed
    trained.back()->to(device);                       // it trains where it is
    if (m == 0) {
      result.untrained_loss = worldmodel::MlpDynamicsLoss(*trained.back(), split.validation);
    }
    worldmodel::TrainMlpDynamics(*trained.back(), split.train, trainer, [&](int step, double loss) {
      if (callbacks.on_progress) callbacks.on_progress(m, step, loss);
    });
    seeds.push_back(trainer.seed);
    const double after = worldmodel::MlpDynamicsLoss(*trained.back(), split.validation);
    result.best_loss = m == 0 ? after : std::min(result.best_loss, after);
    result.worst_loss = m == 0 ? after : std::max(result.worst_loss, after);
  }
  if (job.ensemble == 0) {
    worldmodel::SaveMlpCheckpoint(job.out, info, normalizer, *trained.front());
  } else {
    worldmodel::MlpEnsemble ensemble(trained);
    worldmodel::MlpEnsembleInfo ensemble_info;
    ensemble_info.model = info;
    ensemble_info.action_repeat = data.info.action_repeat;
    ensemble_info.seeds = seeds;
    worldmodel::SaveMlpEnsemble(job.out, ensemble_info, normalizer, *ensemble);
  }
  return result;
}

}  // namespace dfmpc::pipelines
