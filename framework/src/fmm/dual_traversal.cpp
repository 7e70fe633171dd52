// The dual tree traversal (grove/fmm/dual_traversal.hpp): OpenMP tasks near the root, each thread
// collecting (target, source) pairs in buffers of its own; then the pairs grouped by target.
#include "grove/fmm/dual_traversal.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "grove/core/error.hpp"

namespace grove::fmm {

namespace {

using Pair = std::pair<int, int>;  // (target, source)

struct ThreadPairs {
  std::vector<Pair> m2l, p2p, m2p;
};

class Traversal {
 public:
  Traversal(const SourceCells& sources, double theta, std::int64_t task_size)
      : cells_(sources.cells), theta_(theta), task_size_(task_size),
        buffers_(static_cast<std::size_t>(omp_get_max_threads())) {}

  // Every pair of particles within cell a, through its descendants.
  void self(int a) {
    const FmmCell& cell = at(a);
    if (cell.leaf()) {
      pairs().p2p.emplace_back(a, a);
      return;
    }
    for (int i = cell.first_child; i < cell.first_child + cell.child_count; ++i) {
      spawnIf(size(i) > task_size_, [this, i] { self(i); });
      for (int j = i + 1; j < cell.first_child + cell.child_count; ++j)
        spawnIf(size(i) + size(j) > task_size_, [this, i, j] { mutual(i, j); });
    }
  }

  // Both directions between two disjoint local cells.
  void mutual(int a, int b) {
    const FmmCell& ca = at(a);
    const FmmCell& cb = at(b);
    if (accepted(ca, cb)) {
      record(pairs().m2l, a, b);
      record(pairs().m2l, b, a);
      return;
    }
    if (ca.leaf() && cb.leaf()) {
      record(pairs().p2p, a, b);
      record(pairs().p2p, b, a);
      return;
    }
    // Open the larger cell (a leaf cannot be opened), keeping the pair's order (ties in radius
    // are decided by it).
    const bool open_a = !ca.leaf() && (cb.leaf() || ca.radius >= cb.radius);
    const FmmCell& opened = open_a ? ca : cb;
    const int other = open_a ? b : a;
    for (int c = opened.first_child; c < opened.first_child + opened.child_count; ++c)
      spawnIf(size(c) + size(other) > task_size_, [this, c, a, b, open_a] { open_a ? mutual(c, b) : mutual(a, c); });
  }

  // Source s (a received cell) on local target t.
  void directed(int t, int s) {
    const FmmCell& ct = at(t);
    const FmmCell& cs = at(s);
    if (accepted(ct, cs)) {
      record(pairs().m2l, t, s);
      return;
    }
    const bool open_source = !cs.leaf() && (ct.leaf() || cs.radius > ct.radius);
    if (cs.multipole_only || !open_source) {
      if (ct.leaf()) {
        // A contents-less cell was sent because the sender found it far from all our particles.
        record(cs.multipole_only ? pairs().m2p : pairs().p2p, t, s);
        return;
      }
      for (int c = ct.first_child; c < ct.first_child + ct.child_count; ++c)
        spawnIf(size(c) > task_size_, [this, c, s] { directed(c, s); });
      return;
    }
    for (int c = cs.first_child; c < cs.first_child + cs.child_count; ++c)
      spawnIf(size(t) > task_size_, [this, t, c] { directed(t, c); });
  }

  InteractionLists lists(int target_count) {
    InteractionLists out;
    out.m2l = group(&ThreadPairs::m2l, target_count);
    out.p2p = group(&ThreadPairs::p2p, target_count);
    out.m2p = group(&ThreadPairs::m2p, target_count);
    return out;
  }

 private:
  const FmmCell& at(int c) const { return cells_[static_cast<std::size_t>(c)]; }
  std::int64_t size(int c) const { return at(c).end - at(c).begin; }
  bool accepted(const FmmCell& a, const FmmCell& b) const {
    return a.radius + b.radius < theta_ * norm(b.center - a.center);
  }
  ThreadPairs& pairs() { return buffers_[static_cast<std::size_t>(omp_get_thread_num())]; }
  static void record(std::vector<Pair>& to, int target, int source) { to.emplace_back(target, source); }

  template <class Work>
  void spawnIf(bool big, Work work) {
    if (big) {
#pragma omp task firstprivate(work)
      work();
    } else {
      work();
    }
  }

  // Counting sort by target, threads over the buffers' pairs (atomic counts and slots); each
  // target's sources are then sorted, which fixes their order whatever the threads did.
  CsrList group(std::vector<Pair> ThreadPairs::* member, int target_count) {
    CsrList out;
    out.offsets.assign(static_cast<std::size_t>(target_count) + 1, 0);
    std::int64_t* counts = out.offsets.data() + 1;
    for (const ThreadPairs& b : buffers_) {
      const std::vector<Pair>& pairs = b.*member;
      const auto n = static_cast<std::int64_t>(pairs.size());
#pragma omp parallel for schedule(static)
      for (std::int64_t k = 0; k < n; ++k) {
#pragma omp atomic
        ++counts[pairs[static_cast<std::size_t>(k)].first];
      }
    }
    for (std::size_t t = 0; t < static_cast<std::size_t>(target_count); ++t) out.offsets[t + 1] += out.offsets[t];
    out.items.resize(static_cast<std::size_t>(out.offsets.back()));
    std::vector<std::int64_t> fill(out.offsets.begin(), out.offsets.end() - 1);
    for (ThreadPairs& b : buffers_) {
      const std::vector<Pair>& pairs = b.*member;
      const auto n = static_cast<std::int64_t>(pairs.size());
#pragma omp parallel for schedule(static)
      for (std::int64_t k = 0; k < n; ++k) {
        const Pair& p = pairs[static_cast<std::size_t>(k)];
        std::int64_t slot;
#pragma omp atomic capture
        slot = fill[static_cast<std::size_t>(p.first)]++;
        out.items[static_cast<std::size_t>(slot)] = p.second;
      }
      std::vector<Pair>().swap(b.*member);
    }
#pragma omp parallel for schedule(dynamic, 256)
    for (int t = 0; t < target_count; ++t)
      std::sort(out.items.begin() + out.offsets[static_cast<std::size_t>(t)],
                out.items.begin() + out.offsets[static_cast<std::size_t>(t) + 1]);
    return out;
  }

  const std::vector<FmmCell>& cells_;
  double theta_;
  std::int64_t task_size_;
  std::vector<ThreadPairs> buffers_;
};

}  // namespace

void checkTraversal(const SourceCells& sources, int target_count, double theta, const char* where) {
  require(theta > 0.0 && theta < 1.0, where, "theta {} is outside (0, 1)", theta);
  require(target_count >= 1 && static_cast<std::size_t>(target_count) <= sources.cells.size(), where,
          "{} target cells of {} source cells", target_count, sources.cells.size());
}

InteractionLists traverse(const SourceCells& sources, int target_count, double theta) {
  checkTraversal(sources, target_count, theta, "fmm::traverse");
  const std::int64_t n = sources.cells.front().end - sources.cells.front().begin;
  // Tasks for pairs holding more than this many particles: enough tasks for every thread, few
  // enough that their overhead stays small against the work below them.
  const std::int64_t task_size = std::max<std::int64_t>(n / (16 * omp_get_max_threads()), 512);
  Traversal traversal(sources, theta, task_size);
#pragma omp parallel
#pragma omp single
  {
    traversal.self(0);
    for (int root : sources.remote_roots) {
      if (n == 0) break;  // no local particles: nothing to act on
#pragma omp task firstprivate(root)
      traversal.directed(0, root);
    }
  }
  return traversal.lists(target_count);
}

}  // namespace grove::fmm
