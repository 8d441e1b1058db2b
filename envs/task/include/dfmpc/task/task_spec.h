// A task as data: a folder holding one task file (task.toml) and the robot's
// MJCF. The task file names the observation features (MuJoCo sensors of the
// MJCF), the actuators, the initial-state distribution, the reward, the
// planner's cost, the tuned planner options and the oracle's settings; see
// docs/your_robot.md for every key and envs/tasks/ for the built-in tasks.
//
// This library only reads the file: each part is checked by the code that
// uses it (envs builds the simulation, the planner the cost and options),
// through TaskTable, which names the file and the key in every error. It
// needs neither MuJoCo nor LibTorch, so a controller can read a task too.
#ifndef DFMPC_TASK_TASK_SPEC_H_
#define DFMPC_TASK_TASK_SPEC_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace dfmpc::task {

struct TableData;

// One table of a task file: typed access by key. Every accessor throws
// std::invalid_argument naming the file and the key's full path (e.g.
// "tasks/arm/task.toml: cost[2].weight: expected a number, got a string")
// when a required key is missing, has the wrong type or holds NaN or inf.
// RejectUnread() then refuses any key that no accessor asked for, so a
// misspelt key is an error, never silently ignored.
class TaskTable {
 public:
  explicit TaskTable(std::shared_ptr<const TableData> data);

  bool Has(const std::string& key) const;
  double Number(const std::string& key) const;
  double Number(const std::string& key, double fallback) const;
  int Integer(const std::string& key) const;
  int Integer(const std::string& key, int fallback) const;
  bool Boolean(const std::string& key, bool fallback) const;
  std::string Text(const std::string& key) const;
  std::string Text(const std::string& key, const std::string& fallback) const;
  std::vector<double> Numbers(const std::string& key) const;
  // A name or an array of names.
  std::vector<std::string> Texts(const std::string& key) const;
  TaskTable Table(const std::string& key) const;
  // An array of tables; empty when the key is absent.
  std::vector<TaskTable> Tables(const std::string& key) const;

  // The keys present, in the file's order.
  std::vector<std::string> Keys() const;
  void RejectUnread() const;
  // "FILE: path.to.key" for messages about a value this table holds ("FILE:
  // path" for the table itself when `key` is empty).
  std::string Where(const std::string& key) const;
  [[noreturn]] void Fail(const std::string& key, const std::string& message) const;

 private:
  std::shared_ptr<const TableData> data_;
  // Keys asked for; shared by copies so that a table passed by value still
  // counts its reads.
  std::shared_ptr<std::set<std::string>> read_;
};

struct TaskSpec {
  std::string name;
  std::string directory;  // the folder; empty when read from text
  std::string file;       // the task file's path (or origin), for messages
  std::string toml_text;  // the task file, verbatim
  std::string mjcf_file;  // the MJCF's path; empty when read from text
  std::string mjcf_text;  // the MJCF, verbatim
  // The parsed task file. Its top-level keys are checked against the known
  // sections; each section is checked by its user.
  TaskTable root;
};

// A task's name is used in file names and model files, so a plain word:
// 1-64 letters, digits, '_' or '-'.
bool IsTaskName(const std::string& name);

// The file name a task folder must hold.
inline constexpr char kTaskFileName[] = "task.toml";

// A task by built-in name or by folder path (anything with a '/'). Throws
// std::invalid_argument naming the built-in tasks for an unknown name, and for
// a task file that does not parse or misses its MJCF.
TaskSpec LoadTaskSpec(const std::string& name_or_directory);

// A task from the text of its two files (as a model file carries them).
// `origin` names them in messages.
TaskSpec ParseTaskSpec(const std::string& toml_text, const std::string& mjcf_text,
                       const std::string& origin);

// Seconds between control steps: `action_repeat` physics steps (0: the task
// file's) of the MJCF's timestep, its <option timestep="..."> (MuJoCo's
// 0.002 s without one). Read without MuJoCo; envs checks it against the
// compiled model. Throws std::invalid_argument naming the file for an MJCF
// that is not XML or a timestep that is not a positive number.
double ControlTimestep(const TaskSpec& task, int action_repeat = 0);

// The built-in tasks, in a fixed order, and the folder that holds them:
// $DFMPC_TASKS_DIR if set, else the installed share/dfmpc/tasks next to this
// library, else the source tree's envs/tasks.
std::vector<std::string> BuiltinTaskNames();
std::string BuiltinTaskDirectory();

}  // namespace dfmpc::task

#endif  // DFMPC_TASK_TASK_SPEC_H_
