// CapturedGraph on LibTorch's at::cuda::CUDAGraph (CUDA builds only).
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <stdexcept>
#include <string>

#include "cuda_graph.h"

namespace dfmpc::worldmodel {

struct CapturedGraph::Impl {
  at::cuda::CUDAGraph graph;
  c10::Device device = c10::Device(c10::kCUDA);
};

bool CapturedGraph::Supported() { return true; }
CapturedGraph::CapturedGraph() = default;
CapturedGraph::~CapturedGraph() = default;

void CapturedGraph::Capture(const std::function<void()>& work, c10::Device device) {
  if (!device.is_cuda()) throw std::runtime_error("CUDA graphs need a CUDA device");
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  try {
    const c10::cuda::CUDAGuard device_guard(device);
    // Capture needs a stream other than the default one; the inputs were
    // written on the current stream, so the side stream waits for it.
    const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream();
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, device.index());
    c10::cuda::device_synchronize();
    {
      const c10::cuda::CUDAStreamGuard stream_guard(side);
      work();  // warm-up: lazy handles and workspaces are created outside the capture
      side.synchronize();
#if TORCH_VERSION_MAJOR >= 2
      // Only this thread's CUDA calls must keep off unsafe API during capture.
      impl->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
#else
      impl->graph.capture_begin();
#endif
      work();
      impl->graph.capture_end();
    }
    caller.synchronize();
  } catch (const c10::Error& e) {
    throw std::runtime_error(std::string("CUDA graph capture failed: ") +
                             e.what_without_backtrace());
  }
  impl_ = std::move(impl);
}

void CapturedGraph::Replay() {
  if (!impl_) throw std::logic_error("CapturedGraph: Replay before a successful Capture");
  const c10::cuda::CUDAGuard device_guard(impl_->device);
  impl_->graph.replay();
}

}  // namespace dfmpc::worldmodel
