// Model checkpoints: one file with the weights, the model config, the
// normalization statistics, the task and token layout, the noise schedule,
// a format version and the library version, and a checksum of the whole file
// that is verified before anything is parsed. Written atomically.
#ifndef DFMPC_WORLDMODEL_CHECKPOINT_H_
#define DFMPC_WORLDMODEL_CHECKPOINT_H_

#include <string>

#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/tokens.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::worldmodel {

// Version 2 added the checksum; files of version 1 are refused.
inline constexpr int kCheckpointFormatVersion = 2;

// Version of this library, e.g. "0.1.0".
const char* LibraryVersion();

// What every model file's header holds whatever the model's kind: the task
// its data came from and what wrote it. Each kind's info adds its own
// fields.
struct ModelProvenance {
  std::string task;  // environment the data came from
  // The task's files (dfmpc/task/task_spec.h), so that a model needs no
  // task folder to be planned with; empty in files written before models
  // carried them (built-in tasks, found by name).
  std::string task_file;
  std::string task_mjcf;
  std::string notes;  // free text, e.g. the training command
  int format_version = kCheckpointFormatVersion;
  std::string library_version;  // filled in when saving
};

struct ModelInfo : ModelProvenance {
  TokenLayout layout;
  TransformerConfig config;
  int num_timesteps = 1000;
  BetaSchedule beta = BetaSchedule::kCosine;
  Prediction prediction = Prediction::kV;
  int train_window = 0;   // tokens per training window
  int action_repeat = 1;  // physics steps per control step of the data
  // 0: trained at every noise level, it samples with any K. A model
  // distilled for fewer sampling calls (distiller.h) samples with exactly
  // this K, which planners and rollouts take from it.
  int sampling_levels = 0;
};

struct Checkpoint {
  ModelInfo info;
  Normalizer normalizer;
  DfTransformer model{nullptr};
};

// Writes to a temporary file next to `path` and renames it into place: a
// crash leaves the previous file (or none), never a partial one.
void SaveCheckpoint(const std::string& path, const ModelInfo& info, const Normalizer& normalizer,
                    DfTransformerImpl& model);

// What a loaded checkpoint must match; empty / zero fields are not checked.
struct CheckpointExpectation {
  std::string task;
  int token_dim = 0;
};

// Throws std::runtime_error naming the file and the problem: missing,
// truncated or not a dfmpc model, another format version, or a mismatch with
// `expect` (task, token dimension). The model is returned in eval mode, on
// `device` (a file written from any device loads onto any other); the
// normalizer stays on the CPU.
Checkpoint LoadCheckpoint(const std::string& path, const CheckpointExpectation& expect = {},
                          c10::Device device = c10::Device(c10::kCPU));

// The K to sample the model of `info` with: `asked`, or for 0 a distilled
// model's own K (ModelInfo::sampling_levels), else 16. Throws
// std::invalid_argument when a distilled model is asked for another K.
int SamplingLevels(const ModelInfo& info, int asked);

// Human-readable summary of a checkpoint (for `dfmpc info`).
std::string DescribeCheckpoint(const Checkpoint& checkpoint);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_CHECKPOINT_H_
