#include "task.h"

#include <limits>
#include <stdexcept>

namespace dfmpc::envs {

void Task::ObservationBounds(Eigen::VectorXd* lower, Eigen::VectorXd* upper) const {
  const double inf = std::numeric_limits<double>::infinity();
  *lower = Eigen::VectorXd::Constant(observation_size(), -inf);
  *upper = Eigen::VectorXd::Constant(observation_size(), inf);
}

int RequireId(const mjModel* model, mjtObj type, const char* name) {
  const int id = mj_name2id(model, type, name);
  if (id < 0) throw std::runtime_error(std::string("MuJoCo model lacks '") + name + "'");
  return id;
}

const char* CommonVisualXml() {
  return R"(
  <visual>
    <global offwidth="1024" offheight="1024"/>
    <quality offsamples="0"/>
    <headlight ambient="0.4 0.4 0.4" diffuse="0.6 0.6 0.6" specular="0.1 0.1 0.1"/>
  </visual>
  <asset>
    <texture name="sky" type="skybox" builtin="gradient" rgb1="0.4 0.6 0.8" rgb2="0 0 0"
             width="64" height="64"/>
    <texture name="grid" type="2d" builtin="checker" rgb1="0.1 0.2 0.3" rgb2="0.2 0.3 0.4"
             width="256" height="256" mark="edge" markrgb="0.2 0.3 0.4"/>
    <material name="grid" texture="grid" texrepeat="1 1" texuniform="true" reflectance="0"/>
    <material name="self" rgba="0.7 0.5 0.3 1"/>
    <material name="target" rgba="0.6 0.3 0.3 1"/>
  </asset>
)";
}

}  // namespace dfmpc::envs
