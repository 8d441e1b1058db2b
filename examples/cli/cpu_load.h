// Competing CPU work for `dfmpc bench deadline` and `bench stalls`: the
// calling thread pinned to one CPU and, while a CpuLoad lives, a busy loop either in a second
// process pinned to another CPU (the other core busy) or in a thread pinned
// to the caller's CPU (the scheduler shares that core between the two).
#ifndef DFMPC_EXAMPLES_CLI_CPU_LOAD_H_
#define DFMPC_EXAMPLES_CLI_CPU_LOAD_H_

#include <sys/types.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

enum class LoadKind { kNone, kOtherCore, kSameCore };

// "none", "other-core" or "same-core"; throws std::invalid_argument.
LoadKind ParseLoadKind(const std::string& name);
std::string LoadKindName(LoadKind kind);

// The CPUs the calling thread may run on, in order.
std::vector<int> AllowedCpus();
// Pins the calling thread to `cpu`; throws std::runtime_error if refused.
void PinCallingThread(int cpu);
// Runs the calling thread under SCHED_FIFO at `priority` (a robot's
// control thread); throws std::runtime_error if refused (it needs root or
// CAP_SYS_NICE).
void MakeCallingThreadRealtime(int priority);
// Back to the default scheduling (SCHED_OTHER).
void MakeCallingThreadNormal();

// SCHED_FIFO's priority for a bench row of "fifo" scheduling: above every
// normal thread.
constexpr int kBenchRealtimePriority = 10;

// The bench's CPU (the first allowed; the calling thread is pinned to it)
// and the other core's (-1: none). Where `scheduling` names "fifo", tries
// SCHED_FIFO first, so that a refusal comes before any row, not after.
struct BenchCpus {
  int bench = 0;
  int other = -1;
};
BenchCpus PinBenchThread(const std::vector<std::string>& scheduling);

// A bench's --loads and --scheduling options, `fifo_note` telling what a
// fifo row does besides SCHED_FIFO.
void AddLoadOptions(CLI::App& command, std::vector<std::string>& loads,
                    std::vector<std::string>& scheduling, const std::string& fifo_note);

class CpuLoad {
 public:
  // Starts the load for a caller pinned to `caller_cpu`; kOtherCore's
  // process runs on `other_cpu` (negative: there is none, which throws
  // std::invalid_argument).
  CpuLoad(LoadKind kind, int caller_cpu, int other_cpu);
  ~CpuLoad();  // stops it
  CpuLoad(const CpuLoad&) = delete;
  CpuLoad& operator=(const CpuLoad&) = delete;

 private:
  pid_t child_ = -1;
  std::atomic<bool> stop_{false};
  std::thread spinner_;
};

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_CPU_LOAD_H_
