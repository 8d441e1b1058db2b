// The README's C++ snippet: one planned action from the shipped pendulum
// model, with the options its task file tunes and a seed of the caller's.
#include <dfmpc/planner/planner.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  const std::string model = argc > 1 ? argv[1] : "examples/models/pendulum_swingup.pt";
  auto planner = dfmpc::planner::Planner::FromFile(model, {{"seed", 3}});

  Eigen::VectorXd observation(3);
  observation << -1.0, 0.0, 0.0;  // the pendulum hangs at rest: cos, sin, angular velocity
  planner->Reset(observation);
  const Eigen::VectorXd action = planner->Act(observation);
  std::cout << "torque " << action.transpose() << '\n';
}
