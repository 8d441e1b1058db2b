// Loads a MuJoCo model from an MJCF file on disk (so that its <include>s,
// meshes and textures resolve beside it) or from an XML string held in memory
// (through MuJoCo's virtual file system, so nothing touches the disk).
#ifndef DFMPC_ENVS_SRC_MODEL_LOADER_H_
#define DFMPC_ENVS_SRC_MODEL_LOADER_H_

#include <mujoco/mujoco.h>

#include <memory>
#include <string>

namespace dfmpc::envs {

struct ModelDeleter {
  void operator()(mjModel* model) const { mj_deleteModel(model); }
};
struct DataDeleter {
  void operator()(mjData* data) const { mj_deleteData(data); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

// Throws std::runtime_error naming `name` and MuJoCo's message when the XML
// does not compile.
ModelPtr LoadModelFromXml(const std::string& xml, const std::string& name);

// The same for the MJCF file at `path`.
ModelPtr LoadModelFromFile(const std::string& path, const std::string& name);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_MODEL_LOADER_H_
