// reacher: a planar two-link arm (0.12 m and 0.10 m) reaching a random
// target 0.05 .. 0.20 m from the shoulder. Reward: the finger (radius 0.01)
// touching the target (radius 0.05), as dm_control's reacher-easy.
#include <cmath>
#include <memory>
#include <string>

#include "dfmpc/envs/tolerance.h"
#include "task.h"

namespace dfmpc::envs {
namespace {

constexpr double kTargetRadius = 0.05;
constexpr double kFingerRadius = 0.01;

const char* kReacherBody = R"(
  <option timestep="0.02"/>
  <default>
    <joint type="hinge" axis="0 0 1" damping="0.01"/>
    <geom contype="0" conaffinity="0" material="self"/>
    <motor gear="0.05" ctrllimited="true" ctrlrange="-1 1"/>
  </default>
  <worldbody>
    <light pos="0 0 1" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="0.4 0.4 0.1" material="grid"/>
    <camera name="fixed" pos="0 0 0.75" xyaxes="1 0 0 0 1 0"/>
    <body name="target" mocap="true" pos="0.1 0 0.01">
      <geom name="target" type="sphere" size="0.05" material="target" rgba="0.6 0.3 0.3 0.6"/>
    </body>
    <body name="arm" pos="0 0 0.01">
      <joint name="shoulder"/>
      <geom name="arm" type="capsule" fromto="0 0 0 0.12 0 0" size="0.01"/>
      <body name="hand" pos="0.12 0 0">
        <joint name="wrist" limited="true" range="-160 160"/>
        <geom name="hand" type="capsule" fromto="0 0 0 0.1 0 0" size="0.01"/>
        <body name="finger" pos="0.1 0 0">
          <geom name="finger" type="sphere" size="0.01" rgba="0.9 0.9 0.2 1"/>
          <site name="finger" size="0.005"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="shoulder" joint="shoulder"/>
    <motor name="wrist" joint="wrist"/>
  </actuator>
</mujoco>
)";

class Reacher final : public Task {
 public:
  std::string name() const override { return "reacher"; }
  std::string Xml() const override {
    return std::string("<mujoco model=\"reacher\">") + CommonVisualXml() + kReacherBody;
  }
  int observation_size() const override { return 8; }
  void ObservationBounds(Eigen::VectorXd* lower, Eigen::VectorXd* upper) const override {
    Task::ObservationBounds(lower, upper);
    lower->head(4).setConstant(-1.0);
    upper->head(4).setConstant(1.0);
  }
  Eigen::VectorXd ObservationScale() const override {
    return (Eigen::VectorXd(8) << 1.0, 1.0, 1.0, 1.0, 0.1, 0.1, 1.5, 2.0).finished();
  }

  void Initialize(const mjModel* model, mjData* data, Rng* rng) const override {
    data->qpos[0] = rng->Uniform(-kPi, kPi);
    data->qpos[1] = rng->Uniform(-160.0, 160.0) * kPi / 180.0;
    const double angle = rng->Uniform(0.0, 2.0 * kPi);
    const double radius = rng->Uniform(0.05, 0.20);
    data->mocap_pos[0] = radius * std::cos(angle);
    data->mocap_pos[1] = radius * std::sin(angle);
  }
  void Observe(const mjModel* model, const mjData* data,
               Eigen::Ref<Eigen::VectorXd> observation) const override {
    const Eigen::Vector2d to_target = ToTarget(model, data);
    observation << std::cos(data->qpos[0]), std::sin(data->qpos[0]), std::cos(data->qpos[1]),
        std::sin(data->qpos[1]), to_target, data->qvel[0], data->qvel[1];
  }
  double Reward(const mjModel* model, const mjData* data) const override {
    return Tolerance(ToTarget(model, data).norm(), 0.0, kTargetRadius + kFingerRadius);
  }
  // Falls off linearly over 0.4 m (the whole workspace) beyond the target.
  double ShapedReward(const mjModel* model, const mjData* data) const override {
    return Tolerance(ToTarget(model, data).norm(), 0.0, kTargetRadius + kFingerRadius, 0.4,
                     Sigmoid::kLinear, 0.0);
  }

 private:
  static Eigen::Vector2d ToTarget(const mjModel* model, const mjData* data) {
    const mjtNum* finger = data->site_xpos + 3 * RequireId(model, mjOBJ_SITE, "finger");
    return Eigen::Vector2d(data->mocap_pos[0] - finger[0], data->mocap_pos[1] - finger[1]);
  }
};

}  // namespace

std::unique_ptr<Task> MakeReacher() { return std::make_unique<Reacher>(); }

}  // namespace dfmpc::envs
