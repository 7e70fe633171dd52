#pragma once
/// @file
/// grove::gpu::DeviceLongRangeLet: the long-range LET of the GPU-resident pipeline across ranks
/// (nvcc only), the stage that grove::gpu::ResidentTreeLong calls on several ranks.
/// @verbatim
/// plan (a step that builds; collective):
///   every rank's summary allgathered: its particles' box, its root cell's expansion centre and
///   superparticle (RankSummary); then, alike on both sides of every pair, rank s's tree is
///   opened for rank t's box unless the criterion accepts s's particles as a whole from there
///   (POINT_TO_POINT_FAST: OpeningCriterion::opensExtent; never for search trees, whose particles
///   within search reach must travel). A pair that opens exchanges a LET; otherwise s is "far"
///   for t, and s's allgathered root superparticle stands in for it, with no message.
///   The tree selects, for each target's box, what its walk opens (select(), on the device);
///   the selections' sizes go to the targets, point to point.
/// start: the selections' payloads packed on the device and posted (let/let_exchange_gpu.cuh);
///   the far ranks' roots go after the received superparticles.
/// finish: waits for the payloads.
/// refreshFarRoots (REUSE_LIST): the far ranks' fresh roots, along the kept plan.
/// @endverbatim
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/vec3.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_transport.hpp"
#include "grove/gpu/device_vector.hpp"
#include "grove/let/let_exchange_gpu.cuh"
#include "grove/walk/group_lists_gpu.cuh"
#include "grove/walk/opening_criterion.hpp"

namespace grove::gpu {

/// The long-range LET of one GPU-resident tree across ranks: who exchanges with whom, the far
/// ranks' root superparticles, and the payloads' exchange (see the top of this file for the
/// order of calls). EPJ and SPJ as for DeviceLetExchange. Throws grove::Error when CUDA, MPI or
/// the transport fails.
template <class EPJ, class SPJ>
class DeviceLongRangeLet {
 public:
  /// What a rank tells the others about its tree (allgathered).
  struct RankSummary {
    Boxd box;        ///< its particles' box (a search tree's: of its EPIs); empty when it has none
    Vec3d root_pos;  ///< its root cell's expansion centre
    SPJ root;        ///< its root cell's superparticle, which stands in for it where it is far
    int has = 0;     ///< whether it holds particles
  };

  /// Collective over comm, on a step that builds. mine: this rank's summary; reach: for symmetry
  /// search trees, this rank's box of its EPIs' search spheres (allgathered too: every rank passes
  /// one, or none does, else the collectives pair up wrongly); fast: far ranks judged as a whole
  /// (see the top of this file). select(boxes, reaches) makes this rank's selections for its
  /// targets' boxes (and, with reach, their boxes of search spheres), in that order, on the
  /// policy's stream, and returns them; their sizes go to the targets. transport: the transport's
  /// choice when it is first made.
  template <class Select>
  void plan(const Comm& comm, Gpu policy, const RankSummary& mine, const std::optional<Boxd>& reach,
            const OpeningCriterion& criterion, bool fast, TransportChoice transport, Select&& select) {
    const int ranks = comm.size(), me = comm.rank();
    const std::vector<RankSummary> all = comm.allgather(mine);
    std::vector<Boxd> reaches;
    if (reach) reaches = comm.allgather(*reach);
    auto summary = [&](int r) -> const RankSummary& { return all[static_cast<std::size_t>(r)]; };
    // Whether rank `source`'s tree must be opened for rank `target`'s box (else its root stands in).
    auto opens = [&](int target, int source) {
      const RankSummary& t = summary(target);
      const RankSummary& s = summary(source);
      return s.has && !t.box.isEmpty() && (!fast || criterion.opensExtent(t.box, s.root_pos, s.box));
    };
    std::vector<Boxd> target_boxes, target_reaches;
    std::vector<int> targets, sources;
    far_ranks_.clear();
    for (int r = 0; r < ranks; ++r) {
      if (r == me) continue;
      if (opens(r, me)) {
        targets.push_back(r);
        target_boxes.push_back(summary(r).box);
        if (!reaches.empty()) target_reaches.push_back(reaches[static_cast<std::size_t>(r)]);
      }
      if (opens(me, r)) sources.push_back(r);
      else if (summary(r).has && !mine.box.isEmpty()) far_ranks_.push_back(r);
    }
    far_roots_.clear();
    for (int r : far_ranks_) far_roots_.push_back(summary(r).root);
    any_far_ = comm.allreduceMax(far_ranks_.empty() ? 0 : 1) == 1;
    // The boxes of the peers' particles and of mine: where the local and LET trees share cubes.
    std::vector<Boxd> peer_boxes;
    for (int r : targets) peer_boxes.push_back(summary(r).box);
    for (int r : sources)
      if (!std::binary_search(targets.begin(), targets.end(), r)) peer_boxes.push_back(summary(r).box);
    peer_boxes_.assign(peer_boxes.data(), peer_boxes.size(), policy.stream);
    my_box_.assign(&mine.box, mine.box.isEmpty() ? 0 : 1, policy.stream);
    const DeviceIndexLists& selections = select(target_boxes, target_reaches);
    const std::vector<std::int64_t> j_offsets = selections.j_offsets.toHost(policy.stream);
    const std::vector<std::int64_t> s_offsets = selections.s_offsets.toHost(policy.stream);
    std::vector<int> send_ep(targets.size()), send_sp(targets.size());
    for (std::size_t t = 0; t < targets.size(); ++t) {
      send_ep[t] = static_cast<int>(j_offsets[t + 1] - j_offsets[t]);
      send_sp[t] = static_cast<int>(s_offsets[t + 1] - s_offsets[t]);
    }
    exchange_.setCounts(comm, targets, send_ep, send_sp, sources, transport);
  }

  /// Collective over comm, on a step that reuses the plan: the far ranks' fresh root
  /// superparticles (mine: this rank's summary; only its root is read by the others). Call only
  /// when anyFar() (every rank then calls it).
  void refreshFarRoots(const Comm& comm, const RankSummary& mine) {
    const std::vector<RankSummary> all = comm.allgather(mine);
    for (std::size_t k = 0; k < far_ranks_.size(); ++k) far_roots_[k] = all[static_cast<std::size_t>(far_ranks_[k])].root;
  }

  /// Packs the selections' current payloads (epj and moments: this rank's local tree, as when the
  /// plan was made) and posts their exchange. staged: resized to n_head + receivedEp(), its first
  /// n_head entries copied from epj (the local EPJs of a merged global tree; 0 for a tree of what
  /// arrives alone), the received EPJs after them; received_spj: resized to receivedSp() + the far
  /// ranks, the received SPJs then the far ranks' roots. The device is free for other work until
  /// finish(). `owner` names the tree in errors.
  template <class Moment>
  void start(Gpu policy, const EPJ* epj, std::size_t n_head, const Moment* moments, const DeviceIndexLists& selections,
             DeviceVector<EPJ>& staged, DeviceVector<SPJ>& received_spj, const char* owner) {
    const std::size_t n_ep = exchange_.receivedEp(), n_sp = exchange_.receivedSp();
    require(n_head + n_ep < (std::size_t{1} << 31), owner,
            "{} local and {} received particles exceed the 2^31 a resident tree indexes", n_head, n_ep);
    staged.resize(n_head + n_ep);
    received_spj.resize(n_sp + far_roots_.size());
    if (n_head > 0)
      check(cudaMemcpyAsync(staged.data(), epj, n_head * sizeof(EPJ), cudaMemcpyDeviceToDevice, policy.stream),
            "cudaMemcpyAsync (local EPJs to the global tree)");
    if (!far_roots_.empty())  // pageable: the call returns once the bytes are staged
      check(cudaMemcpyAsync(received_spj.data() + n_sp, far_roots_.data(), far_roots_.size() * sizeof(SPJ),
                            cudaMemcpyHostToDevice, policy.stream),
            "cudaMemcpyAsync (far ranks' root superparticles)");
    exchange_.start(policy, epj, moments, selections.j.data(), selections.s.data(), staged.data() + n_head,
                    received_spj.data());
  }

  /// Waits for the payloads: later work on the policy's stream sees them.
  void finish(Gpu policy) { exchange_.finish(policy); }

  /// Whether any rank has far ranks (reuse steps then call refreshFarRoots on every rank).
  bool anyFar() const { return any_far_; }
  /// The ranks that exchange a LET with this one (targets and sources; a rank may be both).
  std::size_t peers() const { return exchange_.targets().size() + exchange_.sources().size(); }
  /// Particles sent by the last start().
  std::size_t sentEp() const { return exchange_.sentEp(); }
  /// Superparticles sent by the last start() (the far ranks' roots not included).
  std::size_t sentSp() const { return exchange_.sentSp(); }
  /// Particles the last start() receives (known once plan() has exchanged the counts).
  std::size_t receivedEp() const { return exchange_.receivedEp(); }
  /// The peers' particle boxes (device): where the local tree and the tree of what arrives share cubes.
  const DeviceVector<Boxd>& peerBoxes() const { return peer_boxes_; }
  /// This rank's particle box (device; none when it holds no particle).
  const DeviceVector<Boxd>& myBox() const { return my_box_; }
  /// How the payloads travel (null before the first plan).
  const DeviceTransport* transport() const { return exchange_.transport(); }
  /// Device bytes held by the exchange beyond the transport's arena (the peers' boxes, a few
  /// bytes, are not counted).
  std::size_t deviceBytes() const { return exchange_.deviceBytes(); }

 private:
  DeviceLetExchange<EPJ, SPJ> exchange_;
  DeviceVector<Boxd> peer_boxes_, my_box_;
  std::vector<int> far_ranks_;  // ranks whose root superparticle stands in for their LET
  std::vector<SPJ> far_roots_;  // their roots, in that order (the LET's last superparticles)
  bool any_far_ = false;
};

}  // namespace grove::gpu
