#include "planner_latency.h"

#include "dfmpc/planner/planner.h"
#include "dfmpc/worldmodel/kv_cache.h"

namespace dfmpc::device_check {

LatencyResult MeasureWarmSteps(const LatencyRequest& request) {
  const auto planner =
      planner::Planner::FromFile(request.model, {{"candidates", request.candidates},
                                                 {"cuda_graphs", request.cuda_graphs},
                                                 {"device", request.device}});
  // Until the ring is full every step attends to a longer history: shapes
  // repeat (and graphs replay) only after that.
  const int filling = planner->context_cache().options().capacity + 1;
  Eigen::VectorXd observation = Eigen::VectorXd::Zero(planner->observation_dim());
  observation(0) = -1.0;  // the pendulum hanging down: [cos, sin, velocity]
  planner->Reset(observation);
  LatencyResult result;
  int replays = 0;
  for (int step = 0; step < filling + request.steps; ++step) {
    result.actions.push_back(planner->Act(observation));
    if (step >= filling) {
      result.latencies_ms.push_back(planner->last_step().latency_ms);
      replays += planner->last_step().graph_replays;
    }
    // After a fallback step there is no plan: observe the same again.
    if (planner->plan().observations.rows() > 0) {
      observation = planner->plan().observations.row(0).transpose();
    }
  }
  result.graph_replays_per_step = static_cast<double>(replays) / request.steps;
  return result;
}

}  // namespace dfmpc::device_check
