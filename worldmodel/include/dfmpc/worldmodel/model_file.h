// What kind of model a file holds, without loading it as any one kind.
#ifndef DFMPC_WORLDMODEL_MODEL_FILE_H_
#define DFMPC_WORLDMODEL_MODEL_FILE_H_

#include <string>

namespace dfmpc::worldmodel {

// The format a model file's metadata names, once its checksum is verified:
// "dfmpc-model" (a state world model), "dfmpc-video-model", "dfmpc-value",
// "dfmpc-mlp-dynamics", "dfmpc-mlp-ensemble" or "dfmpc-frame-tokenizer".
// Throws std::runtime_error naming the file for a missing, corrupt, truncated
// or foreign file.
std::string ModelFileFormat(const std::string& path);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_MODEL_FILE_H_
