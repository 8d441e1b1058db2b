#include "train_world_model.h"

#include <stdexcept>

#include "dataset_tokens.h"
#include "dfmpc/worldmodel/frame_tokenizer.h"
#include "dfmpc/worldmodel/sensor_noise.h"
#include "dfmpc/worldmodel/video_model.h"

namespace dfmpc::pipelines {

std::string OutputStem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  return dot != std::string::npos && (slash == std::string::npos || dot > slash)
             ? path.substr(0, dot)
             : path;
}

std::vector<worldmodel::TrainLogRow> TrainWorldModel(WorldModelJob job,
                                                     const WorldModelCallbacks& callbacks) {
  if (job.out.empty()) throw std::invalid_argument("train: no output file given");
  job.trainer.Validate();
  worldmodel::FrameTokenizerCheckpoint tokenizer;
  if (!job.tokenizer.empty()) tokenizer = worldmodel::LoadFrameTokenizer(job.tokenizer);
  TrainingData data = LoadTrainingData(job.data, job.observation_deltas, job.validation_fraction,
                                       tokenizer.model ? tokenizer.model.get() : nullptr);
  if (tokenizer.model && tokenizer.info.task != data.info.task) {
    throw std::invalid_argument("the tokenizer " + job.tokenizer + " was trained on " +
                                tokenizer.info.task + " frames, the data is " + data.info.task);
  }
  worldmodel::ModelInfo info;
  info.task = data.info.task;
  info.task_file = data.info.task_file;
  info.task_mjcf = data.info.task_mjcf;
  info.layout = data.layout;
  EpisodeSplit& split = data.split;
  const worldmodel::Normalizer normalizer = FitAndNormalize(split);
  job.trainer.sensor_noise = worldmodel::MakeSensorNoise(info.layout, normalizer, job.sensor_noise);

  info.config = job.model;
  info.config.token_dim = info.layout.token_dim();
  // Attention spans at sampling time must stay within what training showed.
  info.config.max_positions = job.trainer.window;
  info.config.action_input_dim = job.known_actions ? info.layout.action_dim : 0;
  info.config.outcome_input = job.outcome_condition;
  info.config.hidden_clean_actions = job.hide_context_actions ? info.layout.action_dim : 0;
  job.trainer.outcome_state_feature = info.layout.action_dim;
  info.prediction = job.trainer.prediction;
  info.train_window = job.trainer.window;
  info.action_repeat = data.info.action_repeat;
  info.notes = job.notes;
  const worldmodel::NoiseSchedule schedule(info.config.num_timesteps, info.beta);
  info.num_timesteps = schedule.num_timesteps();
  if (callbacks.on_start) callbacks.on_start(info, split.train.size(), split.validation.size());

  worldmodel::Trainer trainer(
      info.config, schedule, job.trainer, split.train, split.validation,
      job.outcome_condition ? split.train_rewards : std::vector<at::Tensor>(),
      job.outcome_condition ? split.validation_rewards : std::vector<at::Tensor>());
  auto on_log = [&](const std::vector<worldmodel::TrainLogRow>& log) {
    if (tokenizer.model) {
      worldmodel::SaveVideoModel(job.out, info, normalizer, trainer.ema_model(), tokenizer);
    } else {
      worldmodel::SaveCheckpoint(job.out, info, normalizer, trainer.ema_model());
    }
    if (callbacks.on_log) callbacks.on_log(log);
  };
  const std::function<void(const worldmodel::TrainProgress&)> on_progress =
      callbacks.on_progress ? callbacks.on_progress : [](const worldmodel::TrainProgress&) {};
  trainer.Run(OutputStem(job.out) + ".state", job.resume, on_progress, on_log);
  return trainer.log();
}

}  // namespace dfmpc::pipelines
