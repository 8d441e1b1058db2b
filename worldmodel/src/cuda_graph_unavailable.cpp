// CapturedGraph for a LibTorch without CUDA (e.g. Debian's): nothing can be
// captured, callers run their work eagerly.
#include <stdexcept>

#include "cuda_graph.h"

namespace dfmpc::worldmodel {

struct CapturedGraph::Impl {};

bool CapturedGraph::Supported() { return false; }
CapturedGraph::CapturedGraph() = default;
CapturedGraph::~CapturedGraph() = default;

void CapturedGraph::Capture(const std::function<void()>&, c10::Device) {
  throw std::runtime_error("CUDA graphs need a LibTorch built with CUDA");
}

void CapturedGraph::Replay() {
  throw std::runtime_error("CUDA graphs need a LibTorch built with CUDA");
}

}  // namespace dfmpc::worldmodel
