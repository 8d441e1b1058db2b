// Undoes a planner step's changes to the context cache and the random
// generator unless committed, so that an exception anywhere in a step (or
// in a part of one) leaves both as they were. Transactions nest: a step's
// plan phase has one of its own inside the step's (Planner::Optimize).
//
// Allocates nothing in a step that appends no more tokens than an earlier
// one: the cache's mark reuses the given mark's buffers, and the generator
// is saved as its engine (get_state would copy it into a new tensor;
// Generator::clone leaks its copy in LibTorch 1.13).
#ifndef DFMPC_PLANNER_SRC_STEP_TRANSACTION_H_
#define DFMPC_PLANNER_SRC_STEP_TRANSACTION_H_

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Optional.h>

#include "dfmpc/worldmodel/kv_cache.h"

namespace dfmpc::planner {

class StepTransaction {
 public:
  // `tokens`: the real tokens the step may append; `clears`: the step may
  // also clear the cache first (a copy of the whole history is kept).
  // `mark` holds the cache's side and must outlive the transaction.
  StepTransaction(worldmodel::KvCache& cache, at::Generator& generator, int tokens, bool clears,
                  worldmodel::KvCacheMark& mark);
  ~StepTransaction();
  StepTransaction(const StepTransaction&) = delete;
  StepTransaction& operator=(const StepTransaction&) = delete;

  void Commit() { committed_ = true; }

 private:
  worldmodel::KvCache& cache_;
  worldmodel::KvCacheMark& mark_;
  at::CPUGeneratorImpl* generator_;
  at::mt19937 engine_;
  c10::optional<float> next_float_;
  c10::optional<double> next_double_;
  bool committed_ = false;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_STEP_TRANSACTION_H_
