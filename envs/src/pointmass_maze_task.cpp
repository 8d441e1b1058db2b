// pointmass_maze: a 0.1 m ball with x and y forces (up to 2 N on 1 kg, damped)
// in the U-maze of 1 m cells: the wall between start and goal must be driven
// around. Reward 1 within 0.5 m of the goal, else 0; success is reaching it.
#include <cmath>
#include <memory>
#include <sstream>
#include <string>

#include "dfmpc/envs/tolerance.h"
#include "maze_layout.h"
#include "task.h"

namespace dfmpc::envs {
namespace {

constexpr double kGoalRadius = 0.5;
constexpr double kBallRadius = 0.1;

class PointmassMaze final : public Task {
 public:
  PointmassMaze()
      : layout_(UMaze()),
        start_(layout_.Find('S')),
        goal_(layout_.Find('G')),
        field_(layout_, goal_, kBallRadius, 0.05) {}

  std::string name() const override { return "pointmass_maze"; }
  std::string Xml() const override {
    const double half_width = layout_.num_cols() * layout_.cell_size() / 2.0;
    const double half_height = layout_.num_rows() * layout_.cell_size() / 2.0;
    const double camera_height = 1.1 * std::max(half_width, half_height) / std::tan(kPi / 8.0);
    std::ostringstream xml;
    xml << "<mujoco model=\"pointmass_maze\">" << CommonVisualXml() << R"(
  <option timestep="0.02" gravity="0 0 0"/>
  <default>
    <geom condim="1"/>
    <joint type="slide" damping="1"/>
    <motor gear="2" ctrllimited="true" ctrlrange="-1 1"/>
  </default>
  <worldbody>
    <light pos="0 0 6" dir="0 0 -1"/>
    <geom name="floor" type="plane" size=")"
        << half_width << " " << half_height << R"( 0.1" material="grid" contype="0" conaffinity="0"/>
    <camera name="fixed" pos="0 0 )"
        << camera_height << R"(" xyaxes="1 0 0 0 1 0"/>
)" << layout_.WallsXml()
        << R"(    <body name="goal" mocap="true" pos=")" << goal_.x() << " " << goal_.y() << R"( 0">
      <geom name="goal" type="cylinder" size="0.5 0.005" rgba="0.3 0.8 0.3 0.5"
            contype="0" conaffinity="0"/>
    </body>
    <body name="ball" pos="0 0 0.1">
      <joint name="x" axis="1 0 0"/>
      <joint name="y" axis="0 1 0"/>
      <geom name="ball" type="sphere" size="0.1" mass="1" rgba="0.9 0.7 0.2 1"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="x" joint="x"/>
    <motor name="y" joint="y"/>
  </actuator>
</mujoco>
)";
    return xml.str();
  }
  int observation_size() const override { return 6; }
  Eigen::VectorXd ObservationScale() const override {
    return (Eigen::VectorXd(6) << 1.0, 1.0, 0.3, 0.3, 1.0, 1.0).finished();
  }

  void Initialize(const mjModel* model, mjData* data, Rng* rng) const override {
    data->qpos[0] = start_.x() + rng->Uniform(-0.25, 0.25);
    data->qpos[1] = start_.y() + rng->Uniform(-0.25, 0.25);
  }
  void Observe(const mjModel* model, const mjData* data,
               Eigen::Ref<Eigen::VectorXd> observation) const override {
    observation << data->qpos[0], data->qpos[1], data->qvel[0], data->qvel[1],
        data->mocap_pos[0], data->mocap_pos[1];
  }
  double Reward(const mjModel* model, const mjData* data) const override {
    return IsSuccess(model, data) ? 1.0 : 0.0;
  }
  // Falls off linearly with the shortest path to the goal around the walls.
  double ShapedReward(const mjModel* model, const mjData* data) const override {
    const double distance = field_.Distance(Eigen::Vector2d(data->qpos[0], data->qpos[1]));
    return std::isfinite(distance) ? Tolerance(distance, 0.0, 0.0, 10.0, Sigmoid::kLinear, 0.0)
                                   : 0.0;
  }
  bool has_success_metric() const override { return true; }
  bool IsSuccess(const mjModel* model, const mjData* data) const override {
    return std::hypot(data->qpos[0] - data->mocap_pos[0], data->qpos[1] - data->mocap_pos[1]) <
           kGoalRadius;
  }

 private:
  MazeLayout layout_;
  Eigen::Vector2d start_;
  Eigen::Vector2d goal_;
  DistanceField field_;
};

}  // namespace

std::unique_ptr<Task> MakePointmassMaze() { return std::make_unique<PointmassMaze>(); }

}  // namespace dfmpc::envs
