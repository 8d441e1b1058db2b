#include "tensor_allocations.h"

#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <atomic>

namespace dfmpc::cli {
namespace {

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

// LibTorch 2.3 made allocate non-const and added copy_data.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(size_t bytes) override { return Count(bytes); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    inner_->copy_data(dest, src, count);
  }
#else
  c10::DataPtr allocate(size_t bytes) const override { return Count(bytes); }
#endif
  c10::DeleterFnPtr raw_deleter() const override { return inner_->raw_deleter(); }

  AllocationCount count() const {
    return {allocations_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed)};
  }

 private:
  c10::DataPtr Count(size_t bytes) const {
    allocations_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
    return inner_->allocate(bytes);
  }

  c10::Allocator* inner_;
  mutable std::atomic<int64_t> allocations_{0};
  mutable std::atomic<int64_t> bytes_{0};
};

}  // namespace

AllocationCount CpuTensorAllocations() {
  // Installed once, above the default's priority, and never freed: tensors
  // allocated through it may outlive any scope.
  static CountingAllocator* const counting = [] {
    auto* allocator = new CountingAllocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(allocator, /*priority=*/1);
    return allocator;
  }();
  return counting->count();
}

}  // namespace dfmpc::cli
