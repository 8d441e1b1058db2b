#include "process_group.h"

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

namespace dfmpc::worldmodel {

struct ProcessGroup::Impl {
  DataParallelOptions options;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;

  std::string Where() const {
    return "data-parallel rank " + std::to_string(options.rank) + " of " +
           std::to_string(options.world_size) + " (store " + options.store_host + ":" +
           std::to_string(options.store_port) + ", timeout " +
           std::to_string(options.timeout_seconds) + " s)";
  }
};

ProcessGroup::ProcessGroup(const DataParallelOptions& options) : impl_(std::make_unique<Impl>()) {
  options.Validate();
  impl_->options = options;
  const std::chrono::milliseconds timeout(1000LL * options.timeout_seconds);
  try {
    c10d::TCPStoreOptions store;
    store.port = static_cast<std::uint16_t>(options.store_port);
    store.isServer = options.rank == 0;
    store.numWorkers = options.world_size;
    store.waitWorkers = true;
    store.timeout = timeout;
    impl_->store = c10::make_intrusive<c10d::TCPStore>(options.store_host, store);
    auto gloo = c10d::ProcessGroupGloo::Options::create(timeout);
    // GLOO_SOCKET_IFNAME picks the network interface, as in PyTorch;
    // otherwise the one this machine's hostname resolves to (or loopback).
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    gloo->devices.push_back(interface != nullptr
                                ? c10d::ProcessGroupGloo::createDeviceForInterface(interface)
                                : c10d::ProcessGroupGloo::createDefaultDevice());
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, options.rank,
                                                               options.world_size, gloo);
  } catch (const std::exception& e) {
    throw std::runtime_error(impl_->Where() + ": the ranks did not meet: " + e.what());
  }
}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::SumAcrossRanks(const std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  // One all-reduce of everything, flattened, instead of one per tensor.
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  std::vector<at::Tensor> buffer = {at::cat(flat)};
  try {
    impl_->group->allreduce(buffer)->wait();
  } catch (const std::exception& e) {
    throw std::runtime_error(impl_->Where() + ": all-reduce failed (did a rank die?): " +
                             e.what());
  }
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    t.copy_(buffer[0].narrow(0, offset, t.numel()).view_as(t));
    offset += t.numel();
  }
}

}  // namespace dfmpc::worldmodel
