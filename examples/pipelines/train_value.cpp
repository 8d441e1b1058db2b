#include "train_value.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "dataset_tokens.h"
#include "dfmpc/envs/dataset.h"
#include "dfmpc/worldmodel/device.h"

namespace dfmpc::pipelines {
namespace {

// Each episode's [n, D + 1] examples [o_t, v_t] (worldmodel::ValueExamples).
std::vector<at::Tensor> EpisodeExamples(const envs::Dataset& dataset, double discount) {
  std::vector<at::Tensor> examples;
  const std::vector<at::Tensor> rewards = EpisodeRewards(dataset);
  for (int e = 0; e < dataset.num_episodes(); ++e) {
    const int64_t start = dataset.episode_starts[e];
    const int64_t length = dataset.episode_lengths[e];
    examples.push_back(worldmodel::ValueExamples(CopyRows(dataset.observations, start, length),
                                                 rewards[e], discount, dataset.info.action_repeat));
  }
  return examples;
}

}  // namespace

ValueResult TrainValue(const ValueJob& job, const ValueCallbacks& callbacks) {
  if (job.out.empty()) throw std::invalid_argument("train-value: no output file given");
  if (job.data.empty()) throw std::invalid_argument("--data: no dataset given");
  job.trainer.Validate();
  worldmodel::ValueModelConfig checked = job.config;  // before any data is read
  checked.observation_dim = 1;
  checked.Validate();
  const c10::Device device = worldmodel::ParseDevice(job.device);

  worldmodel::ValueModelInfo info;
  envs::DatasetInfo first;
  EpisodeSplit split;
  for (const std::string& path : job.data) {
    const envs::Dataset dataset = envs::ReadDataset(path, /*load_frames=*/false);
    if (path == job.data.front()) {
      first = dataset.info;
      info.task = dataset.info.task;
      info.task_file = dataset.info.task_file;
      info.task_mjcf = dataset.info.task_mjcf;
      info.action_repeat = dataset.info.action_repeat;
      info.config = job.config;
      info.config.observation_dim = dataset.info.observation_size;
      info.config.Validate();
    } else {
      CheckSameData(dataset.info, path, first, job.data.front());
    }
    EpisodeSplit part = SplitEpisodes(EpisodeExamples(dataset, info.config.discount),
                                      job.validation_fraction, path);
    for (auto [from, to] :
         {std::pair{&part.train, &split.train}, std::pair{&part.validation, &split.validation}}) {
      to->insert(to->end(), from->begin(), from->end());
    }
  }
  info.notes = job.notes;
  const auto rows_of = [](const std::vector<at::Tensor>& examples) {
    long long rows = 0;
    for (const at::Tensor& e : examples) rows += e.size(0);
    return rows;
  };
  const long long rows = rows_of(split.train);
  if (rows == 0 || rows_of(split.validation) == 0) {
    throw std::invalid_argument(
        "train-value: no " + std::string(rows == 0 ? "training" : "validation") +
        " episode is longer than the " +
        std::to_string(worldmodel::TruncatedTail(info.config.discount)) +
        " final steps left out at discount " + std::to_string(info.config.discount) +
        " (collect longer episodes, --episode-physics-steps, or lower --discount)");
  }

  // Normalize the observation columns with statistics of the training rows.
  const int dim = info.config.observation_dim;
  std::vector<at::Tensor> train_observations;
  for (const at::Tensor& e : split.train) train_observations.push_back(e.narrow(1, 0, dim));
  const worldmodel::Normalizer normalizer = worldmodel::Normalizer::Fit(train_observations);
  for (auto* part : {&split.train, &split.validation}) {
    for (at::Tensor& e : *part) {
      e = at::cat({normalizer.Normalize(e.narrow(1, 0, dim)), e.narrow(1, dim, 1)}, 1);
    }
  }
  if (callbacks.on_start) {
    callbacks.on_start(info.task, split.train.size(), split.validation.size(), rows);
  }

  worldmodel::ValueModel model(info.config, job.trainer.seed);
  model->to(device);
  ValueResult result;
  result.untrained_loss = worldmodel::ValueModelLoss(*model, split.validation);
  worldmodel::TrainValueModel(*model, split.train, job.trainer, callbacks.on_progress);
  result.loss = worldmodel::ValueModelLoss(*model, split.validation);
  // The error of a constant prediction, the training targets' mean: what the
  // critic must beat to know anything about states.
  const at::Tensor train_targets = at::cat(split.train).select(1, dim);
  const at::Tensor validation_targets = at::cat(split.validation).select(1, dim);
  result.constant_loss = (validation_targets - train_targets.mean()).square().mean().item<double>();
  worldmodel::SaveValueModel(job.out, info, normalizer, *model);
  return result;
}

}  // namespace dfmpc::pipelines
