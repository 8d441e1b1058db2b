#include "dfmpc/worldmodel/forward_graphs.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "cuda_graph.h"
#include "dfmpc/worldmodel/between_blocks.h"
#include "dfmpc/worldmodel/transformer.h"
#include "forward_setup.h"

namespace dfmpc::worldmodel {
namespace {

// One captured shape: its input buffers, its constant setup and the
// outputs the graph writes.
struct Entry {
  CapturedGraph graph;
  at::Tensor tokens;       // input
  at::Tensor known;        // input (or undefined)
  ForwardSetup setup;      // query angles are inputs, the rest is constant
  at::Tensor output;       // [B, w, d]
  WindowKeysValues kv;     // when asked for at capture
  bool wants_kv = false;
};

// Everything a replay depends on but does not copy in: the shapes, the
// timestep pattern, the conditioning memo and the cache storage the graph
// reads in place.
std::string ShapeKey(const ForwardSetup& setup, const at::Tensor& tokens,
                     const at::Tensor& timesteps, const at::Tensor& known, bool wants_kv) {
  std::ostringstream key;
  key << tokens.sizes() << c10::toString(tokens.scalar_type()) << " kv" << wants_kv << " known";
  if (known.defined()) key << known.sizes();
  const at::Tensor steps = timesteps.contiguous();
  key << " steps" << steps.sizes();
  const int64_t* step = steps.data_ptr<int64_t>();
  for (int64_t i = 0; i < steps.numel(); ++i) key << ' ' << step[i];
  // Memoized conditioning rows are copied into the setup: a newer memo
  // (weights changed) needs a new capture.
  key << " memo" << setup.modulation.defined() << ' ' << setup.conditioning_generation;
  key << " angles" << setup.query_angles.size();
  for (int angles : setup.segment_angles) key << ' ' << angles;
  for (const std::vector<CacheSegment>& layer : setup.segments) {
    for (const CacheSegment& segment : layer) {
      key << " [" << segment.keys.data_ptr() << ' ' << segment.values.data_ptr() << ' '
          << segment.keys.sizes() << ']';
    }
  }
  return key.str();
}

}  // namespace

class ForwardGraphs::Impl {
 public:
  Impl(DfTransformerImpl& model, int max_graphs) : model(model), max_graphs(max_graphs) {}

  DfTransformerImpl& model;
  int max_graphs;
  std::map<std::string, std::unique_ptr<Entry>> graphs;
  std::set<std::string> seen_once;
  ForwardGraphStats stats;
};

ForwardGraphs::ForwardGraphs(DfTransformerImpl& model, int max_graphs)
    : impl_(std::make_unique<Impl>(model, max_graphs)) {}

ForwardGraphs::~ForwardGraphs() = default;

bool ForwardGraphs::Supported() { return CapturedGraph::Supported(); }

const ForwardGraphStats& ForwardGraphs::stats() const { return impl_->stats; }

at::Tensor ForwardGraphs::Forward(const at::Tensor& tokens, const at::Tensor& timesteps,
                                  const KvCache* cache, WindowKeysValues* window_kv,
                                  const at::Tensor& known_actions, const at::Tensor& outcome) {
  Impl& s = *impl_;
  DfTransformerImpl& model = s.model;
  if (!s.stats.failure.empty() || !Supported() || !tokens.is_cuda() || !timesteps.is_cpu() ||
      at::GradMode::is_enabled() || outcome.defined()) {
    ++s.stats.eager;
    return model.Forward(tokens, timesteps, cache, window_kv, known_actions, outcome);
  }
  // Graph buffers are inference tensors; every update of them happens here.
  const c10::InferenceMode inference;
  ForwardSetup setup = model.Prepare(tokens, timesteps, cache, known_actions);
  const bool wants_kv = window_kv != nullptr;
  const std::string key = ShapeKey(setup, tokens, timesteps, known_actions, wants_kv);
  auto found = s.graphs.find(key);
  if (found == s.graphs.end()) {
    // A shape earns a graph on its second call; one-off shapes (a context
    // still filling up) and shapes past the limit run eagerly.
    if (static_cast<int>(s.graphs.size()) >= s.max_graphs || s.seen_once.insert(key).second) {
      if (s.seen_once.size() > 4096) s.seen_once.clear();
      ++s.stats.eager;
      return model.Run(setup, tokens, window_kv, known_actions);
    }
    s.seen_once.erase(key);
    auto entry = std::make_unique<Entry>();
    Entry& e = *entry;
    e.tokens = tokens.clone();
    if (known_actions.defined()) e.known = known_actions.clone();
    e.setup = std::move(setup);
    e.wants_kv = wants_kv;
    try {
      const BetweenBlocks whole_calls(nullptr);  // a graph replays whole
      e.graph.Capture(
          [&e, &model] {
            e.output = model.Run(e.setup, e.tokens, e.wants_kv ? &e.kv : nullptr, e.known);
          },
          tokens.device());
    } catch (const std::exception& error) {
      s.stats.failure = error.what();
      ++s.stats.eager;
      return model.Forward(tokens, timesteps, cache, window_kv, known_actions);
    }
    ++s.stats.captured;
    found = s.graphs.emplace(key, std::move(entry)).first;
  } else {
    Entry& e = *found->second;
    for (size_t i = 0; i < setup.query_angles.size(); ++i) {
      e.setup.query_angles[i].cos.copy_(setup.query_angles[i].cos);
      e.setup.query_angles[i].sin.copy_(setup.query_angles[i].sin);
    }
    e.tokens.copy_(tokens);
    if (known_actions.defined()) e.known.copy_(known_actions);
  }
  Entry& e = *found->second;
  e.graph.Replay();
  ++s.stats.replayed;
  if (window_kv != nullptr) *window_kv = e.kv;
  return e.output;
}

}  // namespace dfmpc::worldmodel
