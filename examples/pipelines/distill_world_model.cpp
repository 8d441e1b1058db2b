#include "distill_world_model.h"

#include <stdexcept>

#include "dataset_tokens.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/video_model.h"

namespace dfmpc::pipelines {
namespace {

// The grid the teacher samples on: its distilled K, else the asked one or
// the library's default of 16.
int TeacherLevels(const worldmodel::ModelInfo& teacher, int asked, const std::string& path) {
  const int own = teacher.sampling_levels;
  if (own > 0 && asked != 0 && asked != own) {
    throw std::invalid_argument("the teacher " + path +
                                " was distilled to sample with K = " + std::to_string(own) +
                                " levels; it cannot teach at K = " + std::to_string(asked));
  }
  const int levels = own > 0 ? own : (asked != 0 ? asked : 16);
  if (levels < 2 || levels % 2 != 0) {
    throw std::invalid_argument("the teacher's K = " + std::to_string(levels) +
                                " levels do not halve: distillation needs an even K >= 2");
  }
  return levels;
}

}  // namespace

std::vector<worldmodel::TrainLogRow> DistillWorldModel(DistillJob job,
                                                       const WorldModelCallbacks& callbacks) {
  if (job.out.empty()) throw std::invalid_argument("distill: no output file given");
  // A video model distils its transformer over the latents of its own
  // tokenizer, and the student keeps the tokenizer.
  const bool video = worldmodel::IsVideoModelFile(job.teacher);
  worldmodel::VideoModel video_teacher;
  if (video) video_teacher = worldmodel::LoadVideoModel(job.teacher);
  worldmodel::Checkpoint teacher =
      video ? video_teacher.world : worldmodel::LoadCheckpoint(job.teacher);
  worldmodel::ModelInfo info = teacher.info;
  job.distiller.teacher_levels = TeacherLevels(info, job.teacher_levels, job.teacher);
  job.distiller.window = job.window != 0 ? job.window : info.train_window;
  job.distiller.prediction = info.prediction;
  job.distiller.Validate();

  TrainingData data =
      LoadTrainingData(job.data, info.layout.observation_deltas, job.validation_fraction,
                       video ? video_teacher.tokenizer.model.get() : nullptr);
  if (data.info.task != info.task) {
    throw std::invalid_argument("the data is " + data.info.task + ", the teacher " + job.teacher +
                                " was trained on " + info.task);
  }
  if (data.info.action_repeat != info.action_repeat) {
    throw std::invalid_argument("the data has " + std::to_string(data.info.action_repeat) +
                                " physics step(s) per control step, the teacher " + job.teacher +
                                " was trained on " + std::to_string(info.action_repeat));
  }
  if (data.layout.token_dim() != info.config.token_dim) {
    throw std::invalid_argument(
        "the data's tokens have " + std::to_string(data.layout.token_dim()) +
        " features, the teacher's " + std::to_string(info.config.token_dim));
  }
  NormalizeSplit(data.split, teacher.normalizer);

  info.sampling_levels = job.distiller.teacher_levels / 2;
  if (!job.notes.empty()) info.notes += (info.notes.empty() ? "" : "; then ") + job.notes;
  if (callbacks.on_start) {
    callbacks.on_start(info, data.split.train.size(), data.split.validation.size());
  }
  const worldmodel::NoiseSchedule schedule(info.num_timesteps, info.beta);
  worldmodel::Distiller distiller(*teacher.model, schedule, job.distiller, data.split.train,
                                  data.split.validation);
  info.config = distiller.student().config();  // a CFG-aware student's differs
  distiller.Run(callbacks.on_progress, [&](const std::vector<worldmodel::TrainLogRow>& log) {
    if (video) {
      worldmodel::SaveVideoModel(job.out, info, teacher.normalizer, distiller.student(),
                                 video_teacher.tokenizer);
    } else {
      worldmodel::SaveCheckpoint(job.out, info, teacher.normalizer, distiller.student());
    }
    if (callbacks.on_log) callbacks.on_log(log);
  });
  return distiller.log();
}

}  // namespace dfmpc::pipelines
