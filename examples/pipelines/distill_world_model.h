// Step distillation of a world model, end to end: load the teacher and the
// data it was trained on, distil a student that samples with half the
// teacher's levels (worldmodel/distiller.h), and write it as a model file
// that records its K. What `dfmpc distill` runs.
#ifndef DFMPC_EXAMPLES_PIPELINES_DISTILL_WORLD_MODEL_H_
#define DFMPC_EXAMPLES_PIPELINES_DISTILL_WORLD_MODEL_H_

#include <string>
#include <vector>

#include "dfmpc/worldmodel/distiller.h"
#include "train_world_model.h"

namespace dfmpc::pipelines {

struct DistillJob {
  std::string teacher;            // a model or video model file (a distilled one distils further)
  std::vector<std::string> data;  // datasets of the teacher's task and control rate
  std::string out;                // the student's model file
  double validation_fraction = 0.1;
  // 0: the teacher's own K (a distilled teacher's, else 16).
  int teacher_levels = 0;
  // 0: the teacher's training window.
  int window = 0;
  // The rest of the options (its teacher_levels and window are replaced).
  worldmodel::DistillerOptions distiller;
  std::string notes;  // appended to the teacher's notes in the student's file
};

// Runs `job`; returns the log (one row per validation; the student's file
// is written after each). on_start receives the student's description.
// Throws std::invalid_argument naming the problem for data of another task,
// control rate or token layout than the teacher's, a video model, K that
// does not halve (odd, or not the distilled teacher's own) and impossible
// options, and what reading the files throws.
std::vector<worldmodel::TrainLogRow> DistillWorldModel(DistillJob job,
                                                       const WorldModelCallbacks& callbacks = {});

}  // namespace dfmpc::pipelines

#endif  // DFMPC_EXAMPLES_PIPELINES_DISTILL_WORLD_MODEL_H_
