#include <tinyxml2.h>

#include <stdexcept>
#include <string>

#include "dfmpc/task/task_spec.h"

namespace dfmpc::task {

double ControlTimestep(const TaskSpec& task, int action_repeat) {
  const std::string mjcf = task.mjcf_file.empty() ? task.file + " (its MJCF)" : task.mjcf_file;
  tinyxml2::XMLDocument document;
  if (document.Parse(task.mjcf_text.c_str(), task.mjcf_text.size()) != tinyxml2::XML_SUCCESS) {
    throw std::invalid_argument(mjcf + ": not XML: " + document.ErrorStr());
  }
  const tinyxml2::XMLElement* root = document.RootElement();
  if (root == nullptr || std::string(root->Name()) != "mujoco") {
    throw std::invalid_argument(mjcf + ": not an MJCF (no <mujoco> element)");
  }
  double timestep = 0.002;  // MuJoCo's default
  for (const tinyxml2::XMLElement* option = root->FirstChildElement("option"); option != nullptr;
       option = option->NextSiblingElement("option")) {
    if (option->Attribute("timestep") == nullptr) continue;
    if (option->QueryDoubleAttribute("timestep", &timestep) != tinyxml2::XML_SUCCESS ||
        !(timestep > 0.0)) {
      throw std::invalid_argument(mjcf + ": <option timestep=\"" + option->Attribute("timestep") +
                                  "\">: not a positive number");
    }
  }
  const int repeat = action_repeat > 0 ? action_repeat : task.root.Integer("action_repeat");
  return repeat * timestep;
}

}  // namespace dfmpc::task
