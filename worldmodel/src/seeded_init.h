// Seeded initialisation of a model's parameters that leaves the process-wide
// random generator as it was (internal to the world model).
#ifndef DFMPC_WORLDMODEL_SRC_SEEDED_INIT_H_
#define DFMPC_WORLDMODEL_SRC_SEEDED_INIT_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>

namespace dfmpc::worldmodel {

// Puts the default CPU generator back in the state it had at construction
// when destroyed. torch::nn layers draw their default initialisation from it
// while they are built, and a library must not move the caller's random
// stream. Another thread drawing from it meanwhile would see its draws
// repeated: build models on the thread that owns the global stream.
class GlobalGeneratorRestorer {
 public:
  GlobalGeneratorRestorer();
  GlobalGeneratorRestorer(const GlobalGeneratorRestorer&) = delete;
  GlobalGeneratorRestorer& operator=(const GlobalGeneratorRestorer&) = delete;
  ~GlobalGeneratorRestorer();

 private:
  at::Tensor state_;
};

// Redraws the weight and bias of every torch::nn::Linear below `module`, in
// registration order, from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (the
// distribution of LibTorch's default initialisation) with a generator seeded
// by `seed`: the same seed gives the same parameters.
void InitializeLinearLayers(torch::nn::Module& module, uint64_t seed);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_SEEDED_INIT_H_
