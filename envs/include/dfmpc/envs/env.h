// The environment interface: MuJoCo tasks with dm_control conventions.
//
// A task is a folder: the robot's MJCF and a task file (task.toml) that
// names its observations (MuJoCo sensors), actions (actuators), initial
// state, reward, planner cost and tuned options (dfmpc/task/task_spec.h,
// docs/your_robot.md). The built-in tasks are such folders in envs/tasks/
// ("angle 0" is upright throughout):
//   pendulum_swingup  obs [cos(angle), sin(angle), angular velocity]       act [torque]
//   pendulum_swingup_novel  obs [cos(angle), sin(angle)]: pendulum_swingup
//                     observed partially (no velocity); same physics and rewards
//   cartpole_swingup  obs [cart x, cos(pole), sin(pole), cart vel, pole ang vel]
//   cartpole_balance    (same layout as cartpole_swingup)                 act [cart force]
//   reacher           obs [cos q1, sin q1, cos q2, sin q2,
//                          target - finger (x, y), q1 vel, q2 vel]        act [shoulder, wrist]
//   pointmass_maze    obs [x, y, vx, vy, goal x, goal y]                   act [force x, force y]
//
// Conventions: every action component lies in [-1, 1]; components outside
// are clipped to the bounds (not an error). A wrong action size, NaN or inf
// throws std::invalid_argument. Episodes follow dm_control's convention
// (and the PlaNet / Dreamer / TD-MPC action-repeat wrappers): an episode is a
// fixed span of simulated time, `episode_physics_steps` physics steps (1000:
// 20 s for the pendulum, reacher and point mass, 10 s for cart-pole); one
// control step is `action_repeat` physics steps, so an episode has
// episode_physics_steps / action_repeat control steps (the repeat must divide
// it). The task reward lies in [0, 1] per physics step and the reward of a
// control step is its sum over the control step's physics steps, so a return
// lies in 0..1000 at any action repeat. Tasks never terminate early. Same
// seed, same actions => the same trajectory, bit for bit.
//
// Perturbations (EnvOptions::perturbation, perturbation.h) are applied per
// episode: Reset(seed) draws the episode's values from the spec's ranges with
// a random stream of their own, so the initial state is the same with or
// without them. Under an action delay of d, Step applies the action commanded
// d steps earlier (zeros for the first d steps). Observation noise is a pure
// function of (seed, step count, feature), so Observation() repeats what
// Reset and Step returned; rewards, ShapedReward and IsSuccess read the true
// state. Noisy observations are not clipped to the observation bounds (a
// sensor's reading is not). A nominal spec changes nothing, bit for bit. The
// scale of each observation feature, for obs_noise_rel, is its typical
// magnitude (about its std under the oracle), each feature's `scale` in the
// task file.
#ifndef DFMPC_ENVS_ENV_H_
#define DFMPC_ENVS_ENV_H_

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dfmpc/envs/perturbation.h"

namespace dfmpc::task {
struct TaskSpec;
}  // namespace dfmpc::task

namespace dfmpc::envs {

// Box bounds of an observation or action vector (inf where unbounded).
struct BoxSpec {
  Eigen::VectorXd lower;
  Eigen::VectorXd upper;
  int size() const { return static_cast<int>(lower.size()); }
};

// Thrown by Env::Render on a machine with no EGL display to render on (its
// message starts "no EGL display"); a failure to render on one that has it
// is a plain std::runtime_error.
class NoRenderDevice : public std::runtime_error {
 public:
  explicit NoRenderDevice(const std::string& why) : std::runtime_error("no EGL display: " + why) {}
};

struct StepResult {
  Eigen::VectorXd observation;
  double reward = 0.0;
  bool terminated = false;  // a terminal state was reached (never, for these tasks)
  bool truncated = false;   // the time limit was reached
  // MuJoCo warnings raised during the step's physics steps. Most often bad
  // accelerations: the simulation went unstable and MuJoCo reset the state,
  // so the step's observation does not follow from the action.
  int simulation_warnings = 0;
};

// dm_control's episode: 1000 physics steps.
inline constexpr int kEpisodePhysicsSteps = 1000;

struct EnvOptions {
  // Physics steps per control step, >= 1; 0 takes the task file's.
  int action_repeat = 0;
  // Simulated time of an episode in physics steps; a positive multiple of
  // action_repeat; 0 takes the task file's.
  int episode_physics_steps = 0;
  // Fixed values or per-episode ranges; the default is the nominal task.
  PerturbationSpec perturbation;
};

class Env {
 public:
  virtual ~Env() = default;

  virtual const std::string& name() const = 0;
  // The task file and MJCF the environment was built from.
  virtual const task::TaskSpec& task() const = 0;
  virtual const BoxSpec& observation_spec() const = 0;
  virtual const BoxSpec& action_spec() const = 0;
  // Seconds of simulated time per control step.
  virtual double control_timestep() const = 0;
  // Physics steps per control step (EnvOptions::action_repeat).
  virtual int action_repeat() const = 0;
  // Control steps per episode: episode_physics_steps / action_repeat.
  virtual int episode_length() const = 0;
  // Control steps taken since the last Reset.
  virtual int step_count() const = 0;

  // Starts an episode; the initial state is a pure function of `seed`.
  virtual Eigen::VectorXd Reset(std::uint64_t seed) = 0;
  // Applies `action` for one control step. Stepping past the time limit is
  // allowed (the simulation goes on; `truncated` stays true).
  virtual StepResult Step(const Eigen::VectorXd& action) = 0;
  virtual Eigen::VectorXd Observation() const = 0;

  // Full state for exact restore: time, step count, the physics state
  // (positions, velocities, activations, solver warm start, controls) and the
  // task's own random state (targets, goals), laid out as
  //   [time, step count, qpos, qvel, act, qacc_warmstart, ctrl,
  //    mocap positions (3 each), mocap quaternions (4 each)]
  // in MuJoCo's order. When the options' perturbation is not nominal, the
  // state also holds what the perturbation adds to the future:
  //   [..., the episode's perturbation (7 values, PerturbationNames() order),
  //    observation noise key (2 values: its high and low 32 bits),
  //    pending delayed actions (the spec's longest delay x action size, the
  //    next applied first, zeros past the episode's delay)]
  // so a Clone (or an env of the same options) given set_state(state())
  // simulates the perturbed episode exactly. set_state(state()) restores the
  // trajectory exactly.
  virtual Eigen::VectorXd state() const = 0;
  // Throws std::invalid_argument on a wrong size or non-finite entries.
  virtual void set_state(const Eigen::VectorXd& state) = 0;

  // A dense reward in [0, 1] at the current state for planners (e.g. energy
  // shaping for pendulum, maze distance for the point mass); equals the task
  // reward where that is already smooth.
  virtual double ShapedReward() const = 0;
  // Whether the task defines success (pointmass_maze: within 0.5 m of the
  // goal), and whether the current state counts as one.
  virtual bool has_success_metric() const = 0;
  virtual bool IsSuccess() const = 0;

  // The perturbation of the current episode (nominal without one).
  virtual Perturbation perturbation() const = 0;

  // Renders the current state from the task's fixed camera, offscreen via
  // EGL (no display needed). Returns height * width * 3 bytes of RGB, rows top
  // to bottom. Throws NoRenderDevice when this machine has no EGL display,
  // std::runtime_error for any other failure.
  virtual std::vector<std::uint8_t> Render(int width, int height) = 0;

  // An independent copy at the same state (shares the immutable model).
  virtual std::unique_ptr<Env> Clone() const = 0;
};

// The built-in task names, sorted.
std::vector<std::string> TaskNames();

// `task`: a built-in name or a task folder's path. Throws
// std::invalid_argument for an unknown name, a task file or MJCF with a
// problem (naming the file and the key) and bad options.
std::unique_ptr<Env> MakeEnv(const std::string& task, const EnvOptions& options = {});
std::unique_ptr<Env> MakeEnv(const task::TaskSpec& task, const EnvOptions& options = {});

// Each formula of a task file's reward, shaped reward and success test
// ("FILE: reward.expression"), with its value at the state Reset(seed)
// starts from (before any action): what `dfmpc task check` prints.
std::vector<std::pair<std::string, double>> FormulaValuesAtStart(const task::TaskSpec& task,
                                                                 std::uint64_t seed);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_ENV_H_
