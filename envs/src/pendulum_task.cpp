// pendulum_swingup: a 1 kg point mass on a 0.5 m massless rod, hinge damping
// 0.1, torque limited to 1 N m (gravity needs 4.9 N m: it must pump). Reward:
// the pole within 8 degrees of upright (dm_control's sparse tolerance).
// pendulum_swingup_novel ("no velocity"): the same task observed partially,
// through [cos, sin] alone; a controller must infer the velocity from history.
#include <cmath>
#include <memory>
#include <string>

#include "dfmpc/envs/tolerance.h"
#include "task.h"

namespace dfmpc::envs {
namespace {

const char* kPendulumBody = R"(
  <option timestep="0.02"/>
  <worldbody>
    <light pos="0 -1 3" dir="0 0.3 -1"/>
    <geom name="floor" type="plane" pos="0 0 -0.8" size="2 2 0.1" material="grid"
          contype="0" conaffinity="0"/>
    <camera name="fixed" pos="0 -2.2 0" xyaxes="1 0 0 0 0 1"/>
    <body name="pole">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.1"/>
      <inertial pos="0 0 0.5" mass="1" diaginertia="1e-5 1e-5 1e-5"/>
      <geom name="rod" type="capsule" fromto="0 0 0 0 0 0.5" size="0.02" material="self"
            contype="0" conaffinity="0"/>
      <geom name="bob" type="sphere" pos="0 0 0.5" size="0.06" material="target"
            contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="torque" joint="hinge" gear="1" ctrllimited="true" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
)";

class PendulumSwingup final : public Task {
 public:
  explicit PendulumSwingup(bool observe_velocity) : observe_velocity_(observe_velocity) {}

  std::string name() const override {
    return observe_velocity_ ? "pendulum_swingup" : "pendulum_swingup_novel";
  }
  std::string Xml() const override {
    return std::string("<mujoco model=\"pendulum\">") + CommonVisualXml() + kPendulumBody;
  }
  int observation_size() const override { return observe_velocity_ ? 3 : 2; }
  void ObservationBounds(Eigen::VectorXd* lower, Eigen::VectorXd* upper) const override {
    Task::ObservationBounds(lower, upper);
    lower->head(2).setConstant(-1.0);
    upper->head(2).setConstant(1.0);
  }
  Eigen::VectorXd ObservationScale() const override {
    Eigen::VectorXd scale = Eigen::VectorXd::Ones(observation_size());
    if (observe_velocity_) scale[2] = 4.0;
    return scale;
  }

  void Initialize(const mjModel* model, mjData* data, Rng* rng) const override {
    data->qpos[0] = rng->Uniform(-kPi, kPi);
  }
  void Observe(const mjModel* model, const mjData* data,
               Eigen::Ref<Eigen::VectorXd> observation) const override {
    observation[0] = std::cos(data->qpos[0]);
    observation[1] = std::sin(data->qpos[0]);
    if (observe_velocity_) observation[2] = data->qvel[0];
  }
  double Reward(const mjModel* model, const mjData* data) const override {
    return Tolerance(std::cos(data->qpos[0]), kCosineBound, 1.0);
  }
  // Height of the mass, mapped to [0, 1], slightly favouring slow motion
  // near the top so the planner settles there.
  double ShapedReward(const mjModel* model, const mjData* data) const override {
    const double upright = (std::cos(data->qpos[0]) + 1.0) / 2.0;
    const double slow = Tolerance(data->qvel[0], 0.0, 0.0, 8.0, Sigmoid::kQuadratic, 0.0);
    return upright * (0.8 + 0.2 * slow);
  }

 private:
  bool observe_velocity_;
  const double kCosineBound = std::cos(8.0 * kPi / 180.0);
};

}  // namespace

std::unique_ptr<Task> MakePendulumSwingup(bool observe_velocity) {
  return std::make_unique<PendulumSwingup>(observe_velocity);
}

}  // namespace dfmpc::envs
