// cartpole_swingup / cartpole_balance: a 1 kg cart on a +-1.8 m rail pushed
// with up to 10 N, carrying a 0.1 kg, 1 m pole. Swing-up starts hanging down,
// balance near upright. Reward: dm_control's smooth
// upright * centered * small_control * small_velocity.
#include <cmath>
#include <memory>
#include <string>

#include "dfmpc/envs/tolerance.h"
#include "task.h"

namespace dfmpc::envs {
namespace {

const char* kCartpoleBody = R"(
  <option timestep="0.01"/>
  <worldbody>
    <light pos="0 -1 4" dir="0 0.2 -1"/>
    <geom name="floor" type="plane" pos="0 0 -0.05" size="4 4 0.1" material="grid"
          contype="0" conaffinity="0"/>
    <camera name="fixed" pos="0 -5 1" xyaxes="1 0 0 0 0 1"/>
    <geom name="rail" type="capsule" fromto="-2 0.1 1 2 0.1 1" size="0.02" rgba="0.3 0.3 0.3 1"
          contype="0" conaffinity="0"/>
    <body name="cart" pos="0 0 1">
      <joint name="slider" type="slide" axis="1 0 0" limited="true" range="-1.8 1.8"
             solreflimit="0.08 1" damping="5e-4"/>
      <geom name="cart" type="box" size="0.2 0.15 0.1" mass="1" material="self"
            contype="0" conaffinity="0"/>
      <body name="pole">
        <joint name="hinge" type="hinge" axis="0 1 0" damping="2e-6"/>
        <geom name="pole" type="capsule" fromto="0 0 0 0 0 1" size="0.045" mass="0.1"
              material="target" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="slide" joint="slider" gear="10" ctrllimited="true" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
)";

class Cartpole final : public Task {
 public:
  explicit Cartpole(bool swingup) : swingup_(swingup) {}

  std::string name() const override { return swingup_ ? "cartpole_swingup" : "cartpole_balance"; }
  std::string Xml() const override {
    return std::string("<mujoco model=\"cartpole\">") + CommonVisualXml() + kCartpoleBody;
  }
  int observation_size() const override { return 5; }
  void ObservationBounds(Eigen::VectorXd* lower, Eigen::VectorXd* upper) const override {
    Task::ObservationBounds(lower, upper);
    (*lower)(0) = -1.8;
    (*upper)(0) = 1.8;
    lower->segment(1, 2).setConstant(-1.0);
    upper->segment(1, 2).setConstant(1.0);
  }
  Eigen::VectorXd ObservationScale() const override {
    return (Eigen::VectorXd(5) << 1.0, 1.0, 1.0, 1.5, 4.0).finished();
  }

  void Initialize(const mjModel* model, mjData* data, Rng* rng) const override {
    if (swingup_) {
      data->qpos[0] = 0.01 * rng->Normal();
      data->qpos[1] = kPi + 0.01 * rng->Normal();
    } else {
      data->qpos[0] = rng->Uniform(-0.25, 0.25);
      data->qpos[1] = rng->Uniform(-0.034, 0.034);
    }
    data->qvel[0] = 0.01 * rng->Normal();
    data->qvel[1] = 0.01 * rng->Normal();
  }
  void Observe(const mjModel* model, const mjData* data,
               Eigen::Ref<Eigen::VectorXd> observation) const override {
    observation << data->qpos[0], std::cos(data->qpos[1]), std::sin(data->qpos[1]),
        data->qvel[0], data->qvel[1];
  }
  double Reward(const mjModel* model, const mjData* data) const override {
    const double upright = (std::cos(data->qpos[1]) + 1.0) / 2.0;
    const double centered = (1.0 + Tolerance(data->qpos[0], 0.0, 0.0, 2.0)) / 2.0;
    const double small_control =
        (4.0 + Tolerance(data->ctrl[0], 0.0, 0.0, 1.0, Sigmoid::kQuadratic, 0.0)) / 5.0;
    const double small_velocity = (1.0 + Tolerance(data->qvel[1], 0.0, 0.0, 5.0)) / 2.0;
    return upright * centered * small_control * small_velocity;
  }

 private:
  bool swingup_;
};

}  // namespace

std::unique_ptr<Task> MakeCartpole(bool swingup) { return std::make_unique<Cartpole>(swingup); }

}  // namespace dfmpc::envs
