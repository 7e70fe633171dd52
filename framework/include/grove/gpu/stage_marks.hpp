#pragma once
/// @file
/// grove::gpu::StageMarks: per-stage device times of a resident tree's step
/// (grove/force/resident_tree_*.cuh). Needs the CUDA runtime headers, not nvcc.
#include <array>
#include <cstddef>
#include <vector>

#include "grove/gpu/cuda_resources.hpp"

namespace grove::gpu {

/// Per-stage device times of a resident tree's step: an event recorded on the stream at the end of
/// each stage; a stage's time runs from the previous mark (or begin()) to its own. Stage is a
/// tree's enum, its stages numbered from 0 and ending in kCount (one timing event each, made at
/// construction). CUDA failures throw grove::Error.
template <class Stage>
class StageMarks {
 public:
  /// Starts a step: records the start event on `stream` and forgets the marks made before.
  void begin(cudaStream_t stream) {
    start_.record(stream);
    order_.clear();
  }
  /// Ends `stage` (below Stage::kCount): records its event on `stream`, after the work queued
  /// there. Needs begin() first; mark a stage at most once per step (a second mark re-records its
  /// one event).
  void mark(cudaStream_t stream, Stage stage) {
    const auto s = static_cast<std::size_t>(stage);
    events_[s].record(stream);
    order_.push_back(static_cast<int>(s));
  }
  /// Calls set(stage, seconds) for each stage marked since begin(), in marking order (waits for
  /// the last mark), and returns the whole span in seconds, begin() to the last mark (0 when
  /// nothing was marked).
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

  /// Per-stage fields of a profile: fields[s] is the field that stage s's time goes to (stages
  /// may share a field, whose time is then their sum; null: not kept).
  template <class Profile>
  using Fields = std::array<double Profile::*, static_cast<std::size_t>(Stage::kCount)>;

  /// collect() into `profile`: each field of `fields` set to the time of its stages marked since
  /// begin() (0 when none was); returns the whole span.
  template <class Profile>
  double collectInto(Profile& profile, const Fields<Profile>& fields) {
    for (const auto field : fields)
      if (field) profile.*field = 0.0;
    return collect([&](Stage stage, double seconds) {
      if (const auto field = fields[static_cast<std::size_t>(stage)]) profile.*field += seconds;
    });
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
