#include "cpu_load.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace dfmpc::cli {
namespace {

// Spins until `stop` (the thread's load) or forever (the child's: it is
// killed).
void Spin(const std::atomic<bool>& stop) {
  volatile unsigned long counter = 0;
  while (!stop.load(std::memory_order_relaxed)) counter = counter + 1;
}

cpu_set_t OneCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return set;
}

}  // namespace

LoadKind ParseLoadKind(const std::string& name) {
  if (name == "none") return LoadKind::kNone;
  if (name == "other-core") return LoadKind::kOtherCore;
  if (name == "same-core") return LoadKind::kSameCore;
  throw std::invalid_argument("unknown load '" + name + "' (none, other-core, same-core)");
}

std::string LoadKindName(LoadKind kind) {
  switch (kind) {
    case LoadKind::kOtherCore:
      return "other-core";
    case LoadKind::kSameCore:
      return "same-core";
    case LoadKind::kNone:
      break;
  }
  return "none";
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    throw std::runtime_error(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

void PinCallingThread(int cpu) {
  const cpu_set_t set = OneCpu(cpu);
  const int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error != 0) {
    throw std::runtime_error("cannot pin the thread to CPU " + std::to_string(cpu) + ": " +
                             std::strerror(error));
  }
}

void MakeCallingThreadRealtime(int priority) {
  sched_param param{};
  param.sched_priority = priority;
  const int error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
  if (error != 0) {
    throw std::runtime_error("cannot run the thread under SCHED_FIFO (it needs root or "
                             "CAP_SYS_NICE): " +
                             std::string(std::strerror(error)));
  }
}

void MakeCallingThreadNormal() {
  sched_param param{};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
}

BenchCpus PinBenchThread(const std::vector<std::string>& scheduling) {
  if (std::find(scheduling.begin(), scheduling.end(), "fifo") != scheduling.end()) {
    MakeCallingThreadRealtime(kBenchRealtimePriority);
    MakeCallingThreadNormal();
  }
  const std::vector<int> cpus = AllowedCpus();
  BenchCpus result;
  result.bench = cpus.front();
  if (cpus.size() > 1) result.other = cpus[1];
  PinCallingThread(result.bench);
  return result;
}

void AddLoadOptions(CLI::App& command, std::vector<std::string>& loads,
                    std::vector<std::string>& scheduling, const std::string& fifo_note) {
  command
      .add_option("--loads", loads,
                  "competing CPU work per row: none, other-core (a busy process on another CPU), "
                  "same-core (a busy thread on the bench's CPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "other-core", "same-core"}));
  command
      .add_option("--scheduling", scheduling,
                  "the bench thread's scheduling per row: normal, or fifo (SCHED_FIFO, " +
                      fifo_note + "; needs root or CAP_SYS_NICE)")
      ->capture_default_str()
      ->check(CLI::IsMember({"normal", "fifo"}));
}

CpuLoad::CpuLoad(LoadKind kind, int caller_cpu, int other_cpu) {
  if (kind == LoadKind::kSameCore) {
    spinner_ = std::thread([this, caller_cpu] {
      PinCallingThread(caller_cpu);
      Spin(stop_);
    });
    return;
  }
  if (kind != LoadKind::kOtherCore) return;
  if (other_cpu < 0) {
    throw std::invalid_argument("other-core load: this process may use one CPU only");
  }
  child_ = fork();
  if (child_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child_ == 0) {  // only async-signal-safe calls from here: the parent has threads
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the bench
    if (getppid() == 1) _exit(0);      // it died before that
    const cpu_set_t set = OneCpu(other_cpu);
    sched_setaffinity(0, sizeof(set), &set);
    const std::atomic<bool> never{false};
    Spin(never);
    _exit(0);
  }
}

CpuLoad::~CpuLoad() {
  stop_ = true;
  if (spinner_.joinable()) spinner_.join();
  if (child_ > 0) {
    kill(child_, SIGKILL);
    waitpid(child_, nullptr, 0);
  }
}

}  // namespace dfmpc::cli
