// cupric/runtime/graph.hpp — CUDA graphs made by stream capture: Graph -> instantiate -> replay.
#pragma once

#include <cstddef>
#include <memory>

#include "cupric/cuda/driver_api.hpp"
#include "cupric/runtime/stream.hpp"

namespace cupric::runtime {

class GraphExec;

class Graph {
 public:
  Graph(cuda::CUgraph handle, int device);
  std::size_t num_nodes() const;
  /// An executable graph; auto_free_on_launch frees its stream-ordered allocations at relaunch.
  GraphExec instantiate(bool auto_free_on_launch = true) const;
  cuda::CUgraph handle() const;
  int device() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

class GraphExec {
 public:
  GraphExec(cuda::CUgraphExec handle, int device);
  /// Replays the graph on `stream`.
  void launch(const Stream& stream) const;
  void upload(const Stream& stream) const;
  cuda::CUgraphExec handle() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace cupric::runtime
