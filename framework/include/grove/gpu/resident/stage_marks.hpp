#pragma once
// Per-stage device times of a resident tree's step (grove/gpu/resident/resident_tree*.cuh): an
// event recorded on the stream at the end of each stage; a stage's time runs from the previous
// mark (or begin()) to its own. Stages are a tree's enum, ending in kCount. Needs the CUDA
// runtime headers, not nvcc.
#include <cstddef>
#include <vector>

#include "grove/gpu/cuda_resources.hpp"

namespace grove::gpu {

template <class Stage>
class StageMarks {
 public:
  void begin(cudaStream_t stream) {
    start_.record(stream);
    order_.clear();
  }
  void mark(cudaStream_t stream, Stage stage) {
    const auto s = static_cast<std::size_t>(stage);
    events_[s].record(stream);
    order_.push_back(static_cast<int>(s));
  }
  // Calls set(stage, seconds) for each stage marked since begin() (waits for the last mark), and
  // returns the whole span (0 when nothing was marked).
  template <class Set>
  double collect(Set&& set) {
    if (order_.empty()) return 0.0;
    events_[static_cast<std::size_t>(order_.back())].synchronize();
    const Event* previous = &start_;
    for (int s : order_) {
      set(static_cast<Stage>(s), events_[static_cast<std::size_t>(s)].secondsSince(*previous));
      previous = &events_[static_cast<std::size_t>(s)];
    }
    return events_[static_cast<std::size_t>(order_.back())].secondsSince(start_);
  }

 private:
  Event start_{true};
  std::vector<Event> events_ = makeEvents();
  std::vector<int> order_;
  static std::vector<Event> makeEvents() {
    std::vector<Event> events;
    for (int s = 0; s < static_cast<int>(Stage::kCount); ++s) events.emplace_back(true);
    return events;
  }
};

}  // namespace grove::gpu
