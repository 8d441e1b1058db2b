#include "dfmpc/worldmodel/kv_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "dfmpc/worldmodel/device.h"

namespace dfmpc::worldmodel {
namespace {

void Require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("KvCache: " + message);
}

std::vector<at::Tensor> ZerosPerLayer(const KvCacheOptions& o, int64_t batch, int64_t slots) {
  std::vector<at::Tensor> storage;
  storage.reserve(o.num_layers);
  for (int l = 0; l < o.num_layers; ++l) {
    storage.push_back(at::zeros({batch, o.num_heads, slots, o.head_dim},
                                at::TensorOptions().dtype(o.dtype).device(o.device)));
  }
  return storage;
}

}  // namespace

KvCache::KvCache(const KvCacheOptions& options) : options_(options) {
  Require(options.num_layers > 0 && options.num_heads > 0 && options.head_dim > 0,
          "layers, heads and head_dim must be positive");
  Require(options.capacity > 0,
          "capacity must be positive, got " + std::to_string(options.capacity));
  Require(options.scratch_capacity >= 0, "scratch capacity must be >= 0");
  Require(options.persistent_batch > 0 && options.scratch_batch > 0, "batches must be positive");
  if (options.evict) {
    Require(options.num_sinks >= 0 && options.num_sinks < options.capacity,
            "num_sinks must be in [0, capacity) so the ring has at least one "
            "slot, got " +
                std::to_string(options.num_sinks) + " sinks for capacity " +
                std::to_string(options.capacity));
  }
  keys_ = ZerosPerLayer(options, options.persistent_batch, options.capacity);
  values_ = ZerosPerLayer(options, options.persistent_batch, options.capacity);
  scratch_keys_ = ZerosPerLayer(options, options.scratch_batch, options.scratch_capacity);
  scratch_values_ = ZerosPerLayer(options, options.scratch_batch, options.scratch_capacity);
}

int64_t KvCache::evicted() const {
  return std::max<int64_t>(0, next_position_ - options_.capacity);
}

void KvCache::CheckLayerTensors(const std::vector<at::Tensor>& keys,
                                const std::vector<at::Tensor>& values, int64_t max_batch,
                                const char* what) const {
  Require(static_cast<int>(keys.size()) == options_.num_layers &&
              static_cast<int>(values.size()) == options_.num_layers,
          std::string(what) + ": expected keys and values for " +
              std::to_string(options_.num_layers) + " layers");
  const int64_t n = keys[0].size(2);
  for (int l = 0; l < options_.num_layers; ++l) {
    for (const at::Tensor* t : {&keys[l], &values[l]}) {
      Require(t->dim() == 4 && t->size(0) >= 1 && t->size(0) <= max_batch &&
                  t->size(1) == options_.num_heads && t->size(2) == n &&
                  t->size(3) == options_.head_dim,
              std::string(what) + ": layer tensors must be [batch <= " + std::to_string(max_batch) +
                  ", " + std::to_string(options_.num_heads) + ", n, " +
                  std::to_string(options_.head_dim) + "], got " + std::to_string(t->dim()) +
                  "-d tensor of " + std::to_string(t->numel()) + " elements");
    }
  }
}

int KvCache::PersistentSlot(int64_t p) const {
  if (p < options_.capacity) return static_cast<int>(p);
  const int64_t ring = options_.capacity - options_.num_sinks;
  return static_cast<int>(options_.num_sinks + (p - options_.num_sinks) % ring);
}

void KvCache::Append(const std::vector<at::Tensor>& keys, const std::vector<at::Tensor>& values) {
  CheckLayerTensors(keys, values, options_.persistent_batch, "Append");
  Require(keys[0].size(0) == options_.persistent_batch,
          "Append: batch must equal persistent_batch " + std::to_string(options_.persistent_batch));
  const int64_t n = keys[0].size(2);
  if (!options_.evict && next_position_ + n > options_.capacity) {
    throw std::length_error("KvCache: context of " + std::to_string(next_position_ + n) +
                            " tokens exceeds the capacity of " + std::to_string(options_.capacity) +
                            " of a cache without eviction");
  }
  Require(scratch_size_ == 0,
          "Append: roll back the scratch tokens before appending to the history");
  // Copy in runs of consecutive slots: the whole context at once when it
  // fits, and at most two runs when the ring wraps.
  for (int64_t i = 0; i < n;) {
    const int slot = PersistentSlot(next_position_);
    const int64_t run = std::min<int64_t>(n - i, options_.capacity - slot);
    for (int l = 0; l < options_.num_layers; ++l) {
      keys_[l].narrow(2, slot, run).copy_(keys[l].narrow(2, i, run));
      values_[l].narrow(2, slot, run).copy_(values[l].narrow(2, i, run));
    }
    next_position_ += run;
    persistent_size_ = std::max<int>(persistent_size_, static_cast<int>(slot + run));
    i += run;
  }
}

void KvCache::AppendScratch(const std::vector<at::Tensor>& keys,
                            const std::vector<at::Tensor>& values) {
  CheckLayerTensors(keys, values, options_.scratch_batch, "AppendScratch");
  const int64_t batch = keys[0].size(0);
  const int64_t n = keys[0].size(2);
  if (scratch_size_ + n > options_.scratch_capacity) {
    throw std::length_error("KvCache: " + std::to_string(scratch_size_ + n) +
                            " scratch tokens exceed the scratch capacity of " +
                            std::to_string(options_.scratch_capacity));
  }
  for (int l = 0; l < options_.num_layers; ++l) {
    scratch_keys_[l].narrow(0, 0, batch).narrow(2, scratch_size_, n).copy_(keys[l]);
    scratch_values_[l].narrow(0, 0, batch).narrow(2, scratch_size_, n).copy_(values[l]);
  }
  scratch_size_ += static_cast<int>(n);
}

void KvCache::RollbackScratch() { scratch_size_ = 0; }

void KvCache::Clear() {
  RollbackScratch();
  persistent_size_ = 0;
  next_position_ = 0;
  ++clears_;
}

KvCacheMark KvCache::Mark(int tokens) const {
  KvCacheMark mark;
  Mark(tokens, mark);
  return mark;
}

void KvCache::Mark(int tokens, KvCacheMark& mark) const {
  mark.persistent_size = persistent_size_;
  mark.next_position = next_position_;
  mark.clears = clears_;
  mark.whole = false;
  mark.slots.clear();
  for (int64_t p = next_position_; p < next_position_ + tokens; ++p) {
    if (!options_.evict && p >= options_.capacity) break;  // Append would throw
    mark.slots.push_back(PersistentSlot(p));
  }
  const int64_t n = static_cast<int64_t>(mark.slots.size());
  if (n == 0) return;
  auto holds = [&](const std::vector<at::Tensor>& buffers) {
    return buffers.size() == static_cast<size_t>(options_.num_layers) &&
           buffers[0].size(2) >= n && buffers[0].size(0) == options_.persistent_batch;
  };
  if (!holds(mark.keys) || !holds(mark.values)) {
    // Both allocated before either is assigned: a failure leaves the old pair.
    std::vector<at::Tensor> keys = ZerosPerLayer(options_, options_.persistent_batch, n);
    std::vector<at::Tensor> values = ZerosPerLayer(options_, options_.persistent_batch, n);
    mark.keys = std::move(keys);
    mark.values = std::move(values);
  }
  // One copy per run of consecutive slots (the ring wraps at most once).
  for (int64_t i = 0, run = 1; i < n; i += run) {
    for (run = 1; i + run < n && mark.slots[i + run] == mark.slots[i] + run;) ++run;
    for (int l = 0; l < options_.num_layers; ++l) {
      mark.keys[l].narrow(2, i, run).copy_(keys_[l].narrow(2, mark.slots[i], run));
      mark.values[l].narrow(2, i, run).copy_(values_[l].narrow(2, mark.slots[i], run));
    }
  }
}

KvCacheMark KvCache::Snapshot() const {
  KvCacheMark mark;
  mark.persistent_size = persistent_size_;
  mark.next_position = next_position_;
  mark.clears = clears_;
  mark.whole = true;
  for (int l = 0; l < options_.num_layers; ++l) {
    mark.keys.push_back(keys_[l].narrow(2, 0, persistent_size_).clone());
    mark.values.push_back(values_[l].narrow(2, 0, persistent_size_).clone());
  }
  return mark;
}

void KvCache::Restore(const KvCacheMark& mark) {
  if (mark.whole) {
    RollbackScratch();
    for (int l = 0; l < options_.num_layers; ++l) {
      keys_[l].narrow(2, 0, mark.persistent_size).copy_(mark.keys[l]);
      values_[l].narrow(2, 0, mark.persistent_size).copy_(mark.values[l]);
    }
    persistent_size_ = mark.persistent_size;
    next_position_ = mark.next_position;
    clears_ = mark.clears;
    return;
  }
  Require(mark.clears == clears_,
          "Restore: the cache was cleared after the mark was taken (a Snapshot survives that)");
  const int64_t appended = next_position_ - mark.next_position;
  Require(appended >= 0 && appended <= static_cast<int64_t>(mark.slots.size()),
          "Restore: the mark does not cover the " + std::to_string(appended) +
              " tokens appended since it was taken");
  RollbackScratch();
  for (int64_t i = 0; i < appended; ++i) {
    const int slot = mark.slots[i];
    for (int l = 0; l < options_.num_layers; ++l) {
      keys_[l].narrow(2, slot, 1).copy_(mark.keys[l].narrow(2, i, 1));
      values_[l].narrow(2, slot, 1).copy_(mark.values[l].narrow(2, i, 1));
    }
  }
  persistent_size_ = mark.persistent_size;
  next_position_ = mark.next_position;
}

int64_t KvCache::SlotPosition(int slot) const {
  Require(slot >= 0 && slot < persistent_size_,
          "slot " + std::to_string(slot) + " is not among the " + std::to_string(persistent_size_) +
              " occupied ones");
  if (evicted() == 0 || slot < options_.num_sinks) return slot;
  // The ring holds the last `ring` positions, position p in ring slot
  // num_sinks + (p - num_sinks) % ring (PersistentSlot).
  const int64_t ring = options_.capacity - options_.num_sinks;
  const int64_t oldest = next_position_ - ring;
  const int64_t offset = slot - options_.num_sinks - (oldest - options_.num_sinks) % ring;
  return oldest + (offset + ring) % ring;
}

std::vector<int64_t> KvCache::KeptPositions() const {
  std::vector<int64_t> kept;
  for (int slot = 0; slot < persistent_size_; ++slot) kept.push_back(SlotPosition(slot));
  std::sort(kept.begin(), kept.end());
  return kept;
}

int64_t KvCache::RelativePosition(int slot) const {
  const int64_t position = SlotPosition(slot);
  return options_.evict && slot < options_.num_sinks ? position : position - evicted();
}

std::vector<CacheSegment> KvCache::Segments(int layer, int64_t batch) const {
  std::vector<CacheSegment> segments;
  auto add = [&](const at::Tensor& keys, const at::Tensor& values, int64_t first, int64_t n,
                 int64_t query_offset) {
    if (n > 0) {
      segments.push_back({keys.narrow(2, first, n), values.narrow(2, first, n), query_offset});
    }
  };
  const int64_t gone = evicted();
  if (gone == 0) {
    add(keys_[layer], values_[layer], 0, persistent_size_, 0);
  } else {
    add(keys_[layer], values_[layer], 0, options_.num_sinks, gone);
    add(keys_[layer], values_[layer], options_.num_sinks, persistent_size_ - options_.num_sinks, 0);
  }
  if (scratch_size_ > 0) {
    Require(batch <= options_.scratch_batch, "a batch of " + std::to_string(batch) +
                                                 " queries exceeds the scratch batch " +
                                                 std::to_string(options_.scratch_batch));
    add(scratch_keys_[layer].narrow(0, 0, batch), scratch_values_[layer].narrow(0, 0, batch), 0,
        scratch_size_, 0);
  }
  return segments;
}

int64_t KvCache::StorageBytes() const {
  int64_t bytes = 0;
  for (const auto* storage : {&keys_, &values_, &scratch_keys_, &scratch_values_}) {
    for (const at::Tensor& t : *storage) bytes += t.numel() * t.element_size();
  }
  return bytes;
}

}  // namespace dfmpc::worldmodel
