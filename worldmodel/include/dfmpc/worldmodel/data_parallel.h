// Data-parallel training across processes (and machines) on LibTorch's own
// distributed engine, c10d: the processes meet at a TCP store that rank 0
// serves, and sum their gradients with Gloo's all-reduce.
//
// Every process draws the whole global batch from the same seed and trains
// on its share of the windows; the loss is normalized by the global batch's
// count, and the summed gradients are the one-process gradient of the global
// batch. So every rank holds the same weights after every step, and the run
// equals a one-process run with the same global batch up to float summation
// order (tested in tests/worldmodel/data_parallel_test.cpp and by the CLI
// test of two `dfmpc train` processes).
#ifndef DFMPC_WORLDMODEL_DATA_PARALLEL_H_
#define DFMPC_WORLDMODEL_DATA_PARALLEL_H_

#include <string>

namespace dfmpc::worldmodel {

struct DataParallelOptions {
  int world_size = 1;  // processes training together; 1 trains alone
  int rank = 0;        // this process, in [0, world_size); rank 0 writes the files
  std::string store_host = "127.0.0.1";  // the machine of rank 0
  int store_port = 29500;
  // Bounds the meeting at the store and every all-reduce: a rank that never
  // comes or dies makes the others fail with an error, not hang.
  int timeout_seconds = 120;

  bool enabled() const { return world_size > 1; }
  // Throws std::invalid_argument naming the first impossible field.
  void Validate() const;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_DATA_PARALLEL_H_
