// A small randomly initialised transformer shared by the world-model tests.
#ifndef DFMPC_TESTS_WORLDMODEL_TINY_MODEL_H_
#define DFMPC_TESTS_WORLDMODEL_TINY_MODEL_H_

#include <torch/types.h>
#include <torch/utils.h>

#include <string>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/tokens.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::worldmodel::testing {

inline TransformerConfig TinyConfig(int token_dim = 5) {
  TransformerConfig config;
  config.token_dim = token_dim;
  config.width = 32;
  config.depth = 2;
  config.heads = 2;
  config.max_positions = 128;
  return config;
}

// Same seed, same weights. Also seeds the global generator, which the
// tests' own draws that follow use.
inline DfTransformer TinyModel(int token_dim = 5, uint64_t seed = 7) {
  torch::manual_seed(seed);
  DfTransformer model(TinyConfig(token_dim), seed);
  model->eval();
  return model;
}

// Writes a tiny pendulum_swingup transformer checkpoint of `layout` to
// `path`: a model file of the wrong kind for the MLP loaders.
inline void SaveTinyTransformer(const std::string& path, const TokenLayout& layout,
                                const Normalizer& normalizer) {
  ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = layout;
  info.config = TinyConfig(layout.token_dim());
  SaveCheckpoint(path, info, normalizer, *TinyModel(layout.token_dim()));
}

}  // namespace dfmpc::worldmodel::testing

#endif  // DFMPC_TESTS_WORLDMODEL_TINY_MODEL_H_
