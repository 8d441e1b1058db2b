// Keys and values of committed tokens, per transformer layer, in storage
// allocated once.
//
// Two regions:
//  * persistent: the real history. `capacity` slots; with eviction on, the
//    first `num_sinks` tokens stay forever and the rest form a ring of the
//    last capacity - num_sinks tokens. Appending writes one slot and never
//    reallocates or shifts the ring. With eviction off, appending past the
//    capacity throws.
//  * scratch: tokens committed while sampling a plan (they reached level 0),
//    `scratch_capacity` slots, emptied by RollbackScratch().
// Occupied slots of each region always form a prefix of its storage, so
// attention reads them as views without copying. The persistent region may
// have batch 1 and be broadcast over a batch of candidates.
//
// Bookkeeping: which slots are occupied and which token each holds follow
// from two counters (the persistent size and the next position) and the
// fixed sink-and-ring layout, never from tensor values. There is no per-slot
// metadata (as llama.cpp's cells): it pays off where single slots are freed,
// shifted or shared between sequences, but here appends only fill a prefix
// or overwrite the ring's oldest slot, so a per-slot copy of the same facts
// could only disagree with the counters that attention reads.
//
// Positions: keys are stored already rotated (rotary embeddings) at their
// token's absolute position. Attention only sees position differences, so
// the ring needs no re-rotation when it evicts. After eviction the history
// is read at cache-relative positions, as StreamingLLM does: sinks keep
// positions 0 .. num_sinks-1 and the ring follows them contiguously.
// Queries attend to the sinks rotated at their cache-relative position
// (absolute minus evicted tokens), which gives that layout without touching
// stored keys; distances stay below the capacity plus the scratch and window
// however long the run.
#ifndef DFMPC_WORLDMODEL_KV_CACHE_H_
#define DFMPC_WORLDMODEL_KV_CACHE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace dfmpc::worldmodel {

struct KvCacheOptions {
  int num_layers = 0;
  int num_heads = 0;
  int head_dim = 0;
  int capacity = 0;          // persistent slots
  int num_sinks = 0;         // pinned first tokens (eviction only)
  bool evict = false;        // ring eviction past capacity, or throw
  int scratch_capacity = 0;  // slots for plan tokens committed while sampling
  int persistent_batch = 1;  // 1 to share the history over all candidates
  int scratch_batch = 1;     // candidates sampled together
  at::ScalarType dtype = at::kFloat;
  at::Device device = at::kCPU;
};

// The persistent region as it was before some appends, enough to undo them
// (KvCache::Restore): its counters and the slots those appends may
// overwrite, with their contents (or, from KvCache::Snapshot, every occupied
// slot). Lets a caller that appends and then fails leave the cache as it
// found it.
struct KvCacheMark {
  int persistent_size = 0;
  int64_t next_position = 0;
  uint64_t clears = 0;                   // the cache's Clear count when taken
  bool whole = false;                    // slots are every occupied slot
  std::vector<int> slots;                // slots the next appends write
  std::vector<at::Tensor> keys, values;  // their contents before, per layer
};

// Keys, values and query offset of a run of occupied slots, as views into
// the storage. Queries attend to it rotated at (absolute position -
// query_offset).
struct CacheSegment {
  at::Tensor keys;           // [batch, heads, n, head_dim], rotated
  at::Tensor values;         // [batch, heads, n, head_dim]
  int64_t query_offset = 0;  // evicted tokens for the sinks, else 0
};

class KvCache {
 public:
  explicit KvCache(const KvCacheOptions& options);

  const KvCacheOptions& options() const { return options_; }

  // Appends n tokens to the persistent region. keys[l] and values[l] are
  // [persistent_batch, heads, n, head_dim] for every layer l.
  void Append(const std::vector<at::Tensor>& keys, const std::vector<at::Tensor>& values);
  // Appends n tokens to the scratch region; tensors have batch scratch_batch
  // or fewer (the first rows of the region are written).
  void AppendScratch(const std::vector<at::Tensor>& keys, const std::vector<at::Tensor>& values);
  // Drops every scratch token; the persistent region is untouched.
  void RollbackScratch();
  // Empties both regions (storage is kept).
  void Clear();
  // Records what appending up to `tokens` persistent tokens would overwrite.
  KvCacheMark Mark(int tokens) const;
  // The same into `mark`, reusing its tensors when they hold enough slots:
  // a control step that marks each time allocates no storage for it after
  // the first. Copies of `mark` share those tensors and change with it.
  void Mark(int tokens, KvCacheMark& mark) const;
  // Records the whole persistent region (a copy of its occupied slots), so
  // that Restore also undoes a Clear and any appends after it.
  KvCacheMark Snapshot() const;
  // Undoes the appends made since `mark` (at most its token count; any
  // number, and a Clear, for a Snapshot) and rolls back the scratch. Throws
  // std::invalid_argument, changing nothing, for a Mark of another cache
  // state: more tokens appended than it covers, or a Clear since it was
  // taken.
  void Restore(const KvCacheMark& mark);

  int persistent_size() const { return persistent_size_; }
  int scratch_size() const { return scratch_size_; }
  int64_t evicted() const;
  // Tokens a new query attends to in the cache.
  int64_t size() const { return persistent_size_ + scratch_size_; }
  // Absolute position of the next token after both regions.
  int64_t NextPosition() const { return next_position_ + scratch_size_; }
  // Absolute position of the token in persistent slot `slot` (in [0,
  // persistent_size())).
  int64_t SlotPosition(int slot) const;
  // Position of persistent slot `slot` in the cache-relative layout.
  int64_t RelativePosition(int slot) const;
  // Absolute positions of the persistent tokens from oldest to newest.
  std::vector<int64_t> KeptPositions() const;

  // Views of the occupied slots of layer `layer`: the history (one segment,
  // or sinks and ring once tokens were evicted) then the scratch tokens
  // narrowed to `batch` candidates. Empty runs are left out.
  std::vector<CacheSegment> Segments(int layer, int64_t batch) const;

  // Bytes of key/value storage, fixed at construction.
  int64_t StorageBytes() const;

 private:
  // Slot of the persistent token at absolute position `position`: in order
  // until full, then the ring slot holding the oldest non-sink token.
  int PersistentSlot(int64_t position) const;
  void CheckLayerTensors(const std::vector<at::Tensor>& keys, const std::vector<at::Tensor>& values,
                         int64_t max_batch, const char* what) const;

  KvCacheOptions options_;
  std::vector<at::Tensor> keys_, values_;  // [Bp, h, capacity, hd]
  std::vector<at::Tensor> scratch_keys_,
      scratch_values_;  // [Bs, h, scratch, hd]
  int persistent_size_ = 0;
  int scratch_size_ = 0;
  int64_t next_position_ = 0;  // absolute position of the next persistent token
  uint64_t clears_ = 0;        // Clear calls, so that a Mark from before one is refused
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_KV_CACHE_H_
