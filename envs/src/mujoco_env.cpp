#include "mujoco_env.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dfmpc::envs {
namespace {

// Copies `count` values between a MuJoCo array and a state vector.
void Pack(const mjtNum* from, int count, Eigen::VectorXd* state, int* offset) {
  state->segment(*offset, count) = Eigen::Map<const Eigen::VectorXd>(from, count);
  *offset += count;
}
void Unpack(const Eigen::VectorXd& state, int count, mjtNum* to, int* offset) {
  Eigen::Map<Eigen::VectorXd>(to, count) = state.segment(*offset, count);
  *offset += count;
}

// EnvOptions' 0 ("the task's") resolved.
EnvOptions Resolved(EnvOptions options, const Task& task) {
  if (options.action_repeat == 0) options.action_repeat = task.default_action_repeat();
  if (options.episode_physics_steps == 0) {
    options.episode_physics_steps = task.default_episode_physics_steps();
  }
  return options;
}

// The warnings MuJoCo has counted since the state was last reset.
int WarningCount(const mjData& data) {
  int count = 0;
  for (int i = 0; i < mjNWARNING; ++i) count += data.warning[i].number;
  return count;
}

}  // namespace

MujocoEnv::MujocoEnv(std::shared_ptr<const Task> task, const EnvOptions& options)
    : task_(std::move(task)),
      nominal_model_(task_->model()),
      options_(Resolved(options, *task_)),
      name_(task_->name()),
      perturbation_(options.perturbation, nominal_model_, task_->ObservationScale()),
      data_(mj_makeData(nominal_model_.get())) {
  if (options_.action_repeat < 1) throw std::invalid_argument("action_repeat must be >= 1");
  if (options_.episode_physics_steps < 1 ||
      options_.episode_physics_steps % options_.action_repeat != 0) {
    throw std::invalid_argument("episode_physics_steps (" +
                                std::to_string(options_.episode_physics_steps) +
                                ") must be a positive multiple of action_repeat (" +
                                std::to_string(options_.action_repeat) + ")");
  }
  task_->ObservationBounds(&observation_spec_.lower, &observation_spec_.upper);
  action_spec_.lower = Eigen::VectorXd::Constant(task_->action_size(), -1.0);
  action_spec_.upper = Eigen::VectorXd::Constant(task_->action_size(), 1.0);
  Reset(0);
}

MujocoEnv::MujocoEnv(const MujocoEnv& other)
    : task_(other.task_),
      nominal_model_(other.nominal_model_),
      options_(other.options_),
      name_(other.name_),
      perturbation_(other.options_.perturbation, other.nominal_model_,
                    other.task_->ObservationScale()),
      data_(mj_makeData(other.nominal_model_.get())),
      observation_spec_(other.observation_spec_),
      action_spec_(other.action_spec_) {
  set_state(other.state());
}

std::unique_ptr<Env> MujocoEnv::Clone() const { return std::unique_ptr<Env>(new MujocoEnv(*this)); }

double MujocoEnv::control_timestep() const {
  return model()->opt.timestep * options_.action_repeat;
}

Eigen::VectorXd MujocoEnv::Reset(std::uint64_t seed) {
  perturbation_.Reset(seed);
  const mjModel* m = model();
  mj_resetData(m, data_.get());
  Rng rng(seed);
  task_->Initialize(data_.get(), &rng);
  task_->Sense(m, data_.get());
  step_count_ = 0;
  return Observation();
}

Eigen::VectorXd MujocoEnv::Clipped(const Eigen::VectorXd& action) const {
  if (action.size() != action_spec_.size()) {
    throw std::invalid_argument(name_ + ": action has " + std::to_string(action.size()) +
                                " components, expected " + std::to_string(action_spec_.size()));
  }
  if (!action.allFinite()) {
    throw std::invalid_argument(name_ + ": action contains NaN or inf");
  }
  return action.cwiseMax(action_spec_.lower).cwiseMin(action_spec_.upper);
}

StepResult MujocoEnv::Step(const Eigen::VectorXd& action) {
  const Eigen::VectorXd applied = perturbation_.Delay(Clipped(action));
  task_->Actuate(applied, data_.get());
  const mjModel* m = model();
  StepResult result;
  const int warnings_before = WarningCount(*data_);
  for (int i = 0; i < options_.action_repeat; ++i) {
    mj_step(m, data_.get());
    // The reward reads sensors and poses, so they must match the new state.
    task_->Sense(m, data_.get());
    result.reward += task_->Reward(m, data_.get());
  }
  result.simulation_warnings = WarningCount(*data_) - warnings_before;
  ++step_count_;
  result.observation = Observation();
  result.truncated = step_count_ >= episode_length();
  return result;
}

Eigen::VectorXd MujocoEnv::Observation() const {
  Eigen::VectorXd observation(observation_spec_.size());
  task_->Observe(data_.get(), observation);
  perturbation_.AddNoise(step_count_, observation);
  return observation;
}

int MujocoEnv::StateSize() const {
  const mjModel* m = model();
  return 2 + m->nq + 2 * m->nv + m->na + m->nu + 7 * m->nmocap + perturbation_.state_size();
}

Eigen::VectorXd MujocoEnv::state() const {
  const mjModel* m = model();
  const mjData* d = data_.get();
  Eigen::VectorXd state(StateSize());
  state[0] = d->time;
  state[1] = step_count_;
  int offset = 2;
  Pack(d->qpos, m->nq, &state, &offset);
  Pack(d->qvel, m->nv, &state, &offset);
  Pack(d->act, m->na, &state, &offset);
  Pack(d->qacc_warmstart, m->nv, &state, &offset);
  Pack(d->ctrl, m->nu, &state, &offset);
  Pack(d->mocap_pos, 3 * m->nmocap, &state, &offset);
  Pack(d->mocap_quat, 4 * m->nmocap, &state, &offset);
  perturbation_.Pack(&state, &offset);
  return state;
}

void MujocoEnv::set_state(const Eigen::VectorXd& state) {
  if (state.size() != StateSize()) {
    throw std::invalid_argument(name_ + ": state has " + std::to_string(state.size()) +
                                " entries, expected " + std::to_string(StateSize()));
  }
  if (!state.allFinite()) throw std::invalid_argument(name_ + ": state contains NaN or inf");
  if (state[1] < 0 || state[1] != std::floor(state[1])) {
    throw std::invalid_argument(name_ + ": state has an invalid step count");
  }
  // The perturbation's entries first: they may still be refused.
  int offset = StateSize() - perturbation_.state_size();
  perturbation_.Unpack(state, &offset);
  const mjModel* m = model();
  mjData* d = data_.get();
  d->time = state[0];
  step_count_ = static_cast<int>(state[1]);
  offset = 2;
  Unpack(state, m->nq, d->qpos, &offset);
  Unpack(state, m->nv, d->qvel, &offset);
  Unpack(state, m->na, d->act, &offset);
  Unpack(state, m->nv, d->qacc_warmstart, &offset);
  Unpack(state, m->nu, d->ctrl, &offset);
  Unpack(state, 3 * m->nmocap, d->mocap_pos, &offset);
  Unpack(state, 4 * m->nmocap, d->mocap_quat, &offset);
  task_->Sense(m, d);
}

double MujocoEnv::ShapedReward() const { return task_->ShapedReward(model(), data_.get()); }

bool MujocoEnv::IsSuccess() const { return task_->IsSuccess(model(), data_.get()); }

std::vector<std::uint8_t> MujocoEnv::Render(int width, int height) {
  if (!renderer_) renderer_ = std::make_unique<Renderer>(model(), task_->camera());
  return renderer_->Render(model(), data_.get(), width, height);
}

}  // namespace dfmpc::envs
