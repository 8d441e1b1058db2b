// A task: its MuJoCo model plus the rules that turn physics into
// observations and rewards. Tasks are immutable once built, so one instance
// is shared by an environment and all its clones.
#ifndef DFMPC_ENVS_SRC_TASK_H_
#define DFMPC_ENVS_SRC_TASK_H_

#include <mujoco/mujoco.h>

#include <Eigen/Core>

#include <memory>
#include <string>

#include "random.h"

namespace dfmpc::envs {

class Task {
 public:
  virtual ~Task() = default;

  virtual std::string name() const = 0;
  virtual std::string Xml() const = 0;
  virtual int observation_size() const = 0;
  // Bounds of each observation component (default: unbounded).
  virtual void ObservationBounds(Eigen::VectorXd* lower, Eigen::VectorXd* upper) const;
  // Typical magnitude of each observation component (documented in env.h),
  // the unit of relative observation noise.
  virtual Eigen::VectorXd ObservationScale() const = 0;

  // Sets the initial state in `data`, already reset to the model's defaults.
  virtual void Initialize(const mjModel* model, mjData* data, Rng* rng) const = 0;
  virtual void Observe(const mjModel* model, const mjData* data,
                       Eigen::Ref<Eigen::VectorXd> observation) const = 0;
  // Per-step reward in [0, 1]; `data->ctrl` holds the applied action.
  virtual double Reward(const mjModel* model, const mjData* data) const = 0;
  virtual double ShapedReward(const mjModel* model, const mjData* data) const {
    return Reward(model, data);
  }
  virtual bool has_success_metric() const { return false; }
  virtual bool IsSuccess(const mjModel* model, const mjData* data) const { return false; }
};

// Task constructors, one per file.
// observe_velocity: pendulum_swingup, else pendulum_swingup_novel.
std::unique_ptr<Task> MakePendulumSwingup(bool observe_velocity);
std::unique_ptr<Task> MakeCartpole(bool swingup);
std::unique_ptr<Task> MakeReacher();
std::unique_ptr<Task> MakePointmassMaze();

// Helpers shared by the tasks.
constexpr double kPi = 3.14159265358979323846;
// Id of a named MuJoCo object; throws std::runtime_error if it is missing.
int RequireId(const mjModel* model, mjtObj type, const char* name);
// The <visual> and <asset> elements every task uses: a 1024x1024 offscreen
// buffer without multisampling, a sky box, and "grid" and "self" materials.
const char* CommonVisualXml();

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_TASK_H_
