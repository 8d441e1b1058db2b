// Learning-rate schedule shared by the trainers (internal).
#ifndef DFMPC_WORLDMODEL_SRC_LEARNING_RATE_H_
#define DFMPC_WORLDMODEL_SRC_LEARNING_RATE_H_

namespace dfmpc::worldmodel {

// The rate of 0-based step `step` of `total`: linear warmup over
// `warmup` steps to `peak`, then cosine decay towards `peak * min_ratio`
// (reached at step `total`).
double WarmupCosineLearningRate(int step, int total, int warmup, double peak, double min_ratio);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_LEARNING_RATE_H_
