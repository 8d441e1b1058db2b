#include "model_loader.h"

#include <cstring>
#include <stdexcept>

namespace dfmpc::envs {
namespace {

// Adds `contents` to `vfs` as `filename`; the API differs between MuJoCo 2.x
// and 3.x.
void AddToVfs(mjVFS* vfs, const std::string& filename, const std::string& contents) {
#if mjVERSION_HEADER >= 300
  if (mj_addBufferVFS(vfs, filename.c_str(), contents.data(), static_cast<int>(contents.size()))) {
    throw std::runtime_error("cannot add '" + filename + "' to MuJoCo's virtual file system");
  }
#else
  if (mj_makeEmptyFileVFS(vfs, filename.c_str(), static_cast<int>(contents.size())) != 0) {
    throw std::runtime_error("cannot add '" + filename + "' to MuJoCo's virtual file system");
  }
  const int index = mj_findFileVFS(vfs, filename.c_str());
  std::memcpy(vfs->filedata[index], contents.data(), contents.size());
#endif
}

ModelPtr Checked(mjModel* model, const std::string& name, const char* error) {
  if (model == nullptr) {
    throw std::runtime_error("cannot load the MuJoCo model of task '" + name + "': " + error);
  }
  return ModelPtr(model);
}

}  // namespace

ModelPtr LoadModelFromXml(const std::string& xml, const std::string& name) {
  auto vfs = std::make_unique<mjVFS>();  // about 2 MB in MuJoCo 2.x: keep it off the stack
  mj_defaultVFS(vfs.get());
  const std::string filename = name + ".xml";
  char error[1000] = "";
  mjModel* model = nullptr;
  try {
    AddToVfs(vfs.get(), filename, xml);
    model = mj_loadXML(filename.c_str(), vfs.get(), error, sizeof(error));
  } catch (...) {
    mj_deleteVFS(vfs.get());
    throw;
  }
  mj_deleteVFS(vfs.get());
  return Checked(model, name, error);
}

ModelPtr LoadModelFromFile(const std::string& path, const std::string& name) {
  char error[1000] = "";
  return Checked(mj_loadXML(path.c_str(), nullptr, error, sizeof(error)), name, error);
}

}  // namespace dfmpc::envs
