// A CUDA graph of device work, captured once and replayed (internal to the
// world model). Built on LibTorch's at::cuda::CUDAGraph where LibTorch has
// CUDA (cuda_graph.cpp); elsewhere (cuda_graph_unavailable.cpp) Supported()
// is false and Capture throws, so callers run the work eagerly.
#ifndef DFMPC_WORLDMODEL_SRC_CUDA_GRAPH_H_
#define DFMPC_WORLDMODEL_SRC_CUDA_GRAPH_H_

#include <c10/core/Device.h>

#include <functional>
#include <memory>

namespace dfmpc::worldmodel {

class CapturedGraph {
 public:
  // True when this build of LibTorch can capture CUDA graphs.
  static bool Supported();

  CapturedGraph();
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  // Runs `work` once on a side stream of `device` (the warm-up that lets
  // cuBLAS and the allocator set up outside the capture), then captures it
  // into this graph from that stream. The tensors `work` allocates come from
  // the graph's private memory pool and stay valid as its outputs. `work`
  // must only launch device work: no host synchronization, no copies from
  // pageable host memory. Throws std::runtime_error when capture fails; the
  // graph is then empty.
  void Capture(const std::function<void()>& work, c10::Device device);
  // Launches the captured work on the current stream of its device.
  void Replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_CUDA_GRAPH_H_
