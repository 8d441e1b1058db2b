// CUDA graphs of the transformer's forward calls.
//
// A model this small is bound by kernel launches on a GPU, not arithmetic:
// one forward is a few hundred small kernels, and launching them costs more
// than running them. A forward call whose shapes repeat (the planner's warm
// step once its context ring is full; each call of a rollout chunk) is
// captured once as a CUDA graph and then replayed: one launch instead of
// hundreds. What changes between calls of one shape, the window's tokens
// and side input and the rotary angles of its positions, is copied into the
// graph's input buffers before each replay; the cache is read in place, so
// a graph is only replayed for the same cache storage and occupancy.
//
// A call is run eagerly (model.Forward) when graphs cannot serve it: on the
// CPU, in a LibTorch without CUDA, with autograd on (guidance), the first
// time a shape is seen (shapes that never repeat are not worth a capture),
// or when capture fails (the failure is kept in stats() and graphs are off
// from then on). Replays run the same kernels on the same inputs as the
// eager call, so outputs agree with it (tests/cuda checks this).
#ifndef DFMPC_WORLDMODEL_FORWARD_GRAPHS_H_
#define DFMPC_WORLDMODEL_FORWARD_GRAPHS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>

namespace dfmpc::worldmodel {

class DfTransformerImpl;
class KvCache;
struct WindowKeysValues;

struct ForwardGraphStats {
  int64_t captured = 0;  // graphs captured
  int64_t replayed = 0;  // calls served by a replay
  int64_t eager = 0;     // calls run eagerly
  std::string failure;   // why capture failed (graphs are then off), or empty
};

class ForwardGraphs {
 public:
  // The model must outlive this object. At most `max_graphs` shapes are
  // kept (each holds its own activation memory); calls of further shapes
  // run eagerly.
  explicit ForwardGraphs(DfTransformerImpl& model, int max_graphs = 64);
  ~ForwardGraphs();
  ForwardGraphs(const ForwardGraphs&) = delete;
  ForwardGraphs& operator=(const ForwardGraphs&) = delete;

  // True when this LibTorch build can capture CUDA graphs.
  static bool Supported();

  // DfTransformerImpl::Forward's contract, with timesteps on the CPU for a
  // replay (device timesteps force an eager call). The output and
  // window_kv of a replayed call are the graph's own buffers: valid until
  // the next call of the same shape, so copy what must outlive it.
  // Calls with an outcome condition run eagerly.
  at::Tensor Forward(const at::Tensor& tokens, const at::Tensor& timesteps, const KvCache* cache,
                     WindowKeysValues* window_kv = nullptr,
                     const at::Tensor& known_actions = at::Tensor(),
                     const at::Tensor& outcome = at::Tensor());

  const ForwardGraphStats& stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_FORWARD_GRAPHS_H_
