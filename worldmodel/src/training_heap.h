// Keeps the memory a training step frees in the process for the next step
// (internal).
//
// A training step allocates and frees the same few hundred megabytes of
// activations and gradients every time. glibc gives the top of its heap
// back to the kernel as soon as enough of it is free, and serves large
// blocks by mmap, so the next step touches fresh pages and takes a page
// fault for each: on a 2-core VM that was 3.5x the wall time of a small
// model's training (docs/design.md). A heap that keeps a pad of freed
// memory, and an mmap threshold at glibc's own ceiling, make the pages
// reused instead. Process-wide, so asked for once, by the optimiser
// (scheduled_adamw.h) that every training run constructs; a user who sets
// glibc's MALLOC_TOP_PAD_ or MALLOC_MMAP_THRESHOLD_ keeps their choice.
// Does nothing without glibc.
#ifndef DFMPC_WORLDMODEL_SRC_TRAINING_HEAP_H_
#define DFMPC_WORLDMODEL_SRC_TRAINING_HEAP_H_

#include <cstddef>

namespace dfmpc::worldmodel {

// Freed memory the heap keeps at its top, and the size from which blocks
// are mapped on their own.
inline constexpr std::size_t kTrainingHeapPad = std::size_t{256} << 20;
inline constexpr std::size_t kTrainingMmapThreshold = std::size_t{32} << 20;

// Sets both, once per process.
void RetainHeapForTraining();

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_TRAINING_HEAP_H_
