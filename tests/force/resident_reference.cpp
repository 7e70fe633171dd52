#include "resident_reference.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <span>

#include "gravity_kernels.hpp"
#include "grove/grove.hpp"
#include "grove/tree/groups.hpp"
#include "grove/tree/moment_pass.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace resident_test {

namespace {
grove::Vec3d isotropic(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double c = 2.0 * u(rng) - 1.0, phi = 2.0 * M_PI * u(rng), s = std::sqrt(1.0 - c * c);
  return {s * std::cos(phi), s * std::sin(phi), c};
}
}  // namespace

std::vector<user::Body> coldSphere(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<user::Body> bodies(n);
  for (std::size_t k = 0; k < n; ++k) {
    bodies[k].id = static_cast<std::int64_t>(k);
    bodies[k].mass = 1.0 / static_cast<double>(n);
    bodies[k].pos = std::cbrt(u(rng)) * isotropic(rng);
  }
  return bodies;
}

std::vector<user::Body> plummerSphere(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<user::Body> bodies(n);
  for (std::size_t k = 0; k < n; ++k) {
    double r;
    do r = 1.0 / std::sqrt(std::pow(u(rng), -2.0 / 3.0) - 1.0);
    while (!(r < 20.0));
    bodies[k].id = static_cast<std::int64_t>(k);
    bodies[k].mass = 1.0 / static_cast<double>(n);
    bodies[k].pos = r * isotropic(rng);
  }
  return bodies;
}

HostBuild hostBuild(const std::vector<user::Body>& bodies, int n_leaf_limit, int n_group_limit) {
  HostBuild h;
  grove::Boxd box = grove::Boxd::empty();
  for (const auto& b : bodies) box.merge(grove::positionOf(b));
  h.root = grove::rootCellAround(box);
  grove::LargeVector<grove::KeyIndex> items(bodies.size()), scratch;
  for (std::size_t i = 0; i < bodies.size(); ++i)
    items[i] = {h.root.keyOf(grove::positionOf(bodies[i])), static_cast<std::uint32_t>(i)};
  grove::radixSortByKey(items, scratch);
  std::vector<user::GravityEPI> epi(bodies.size());
  std::vector<user::GravityEPJ> epj(bodies.size());
  for (std::size_t k = 0; k < items.size(); ++k) {
    h.keys.push_back(items[k].key);
    h.order.push_back(items[k].index);
    epi[k].copyFromFP(bodies[items[k].index]);
    epj[k].copyFromFP(bodies[items[k].index]);
  }
  const grove::TreeShape shape =
      grove::linkCells(grove::Cpu{}, std::span<const grove::MortonKey>(h.keys), {}, n_leaf_limit);
  h.cells = shape.cells;
  h.level_begin = shape.level_begin;
  for (const grove::InteractionGroup& g : grove::makeGroups(grove::Cpu{}, shape, n_group_limit)) {
    h.groups.push_back((std::uint64_t{g.first} << 32) | g.count);
    grove::Boxd b = grove::Boxd::empty();
    for (std::uint32_t i = g.first; i < g.first + g.count; ++i) b.merge(grove::positionOf(epi[i]));
    h.group_boxes.push_back(b);
  }
  const std::span<const user::GravityEPJ> j(epj);
  const std::span<const grove::SPJMonopole> none;
  grove::computeMoments<grove::MomentMonopole>(grove::Cpu{}, shape, j, none, h.monopoles);
  grove::computeMoments<grove::MomentQuadrupole>(grove::Cpu{}, shape, j, std::span<const grove::SPJQuadrupole>(),
                                                 h.quadrupoles);
  return h;
}

std::vector<LetSelection> hostLetSelection(const std::vector<user::Body>& bodies, double theta, int n_leaf_limit,
                                           const std::vector<grove::Boxd>& targets) {
  const HostBuild h = hostBuild(bodies, n_leaf_limit, 1);
  grove::TreeShape shape;
  shape.cells = h.cells;
  shape.level_begin = h.level_begin;
  std::vector<grove::Vec3d> cell_pos;
  for (const auto& m : h.monopoles) cell_pos.push_back(m.pos);
  const grove::OpeningCriterion criterion(h.root, theta);
  std::vector<LetSelection> out(targets.size());
  std::vector<std::int32_t> stack;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    LetSelection& s = out[t];
    grove::walkTree(
        shape, std::span<const grove::Vec3d>(cell_pos), criterion, targets[t], false, stack,
        [&](std::int32_t cell) { s.cells.push_back(cell); },
        [&](const grove::TreeCell& leaf) {
          for (std::uint32_t i = leaf.ep_first; i < leaf.ep_first + leaf.ep_count; ++i)
            s.particles.push_back(static_cast<int>(i));
        });
    std::sort(s.cells.begin(), s.cells.end());
    std::sort(s.particles.begin(), s.particles.end());
  }
  return out;
}

std::vector<user::GravityForce> hostTreeForces(const std::vector<user::Body>& bodies, double theta, int n_leaf_limit,
                                               int n_group_limit, float eps2, bool quadrupole,
                                               grove::OpeningRule opening) {
  grove::ParticleSystem<user::Body> psys;
  for (const auto& b : bodies) psys.add(b);
  grove::DomainInfo dinfo;
  dinfo.decomposeDomainAll(psys);
  std::vector<user::GravityForce> force(bodies.size());
  auto run = [&](auto& tree, auto sp_kernel) {
    tree.setOpeningRule(opening);
    tree.calcForceAllAndWriteBack(user::GravityMonopoleKernel{eps2}, sp_kernel, psys, dinfo);
    for (const auto& b : psys) {
      user::GravityForce& f = force[static_cast<std::size_t>(b.id)];
      f.acc = grove::Vec3f(b.acc);
      f.pot = static_cast<float>(b.pot);
    }
  };
  using Trees = grove::TreeForForceLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>;
  if (quadrupole) {
    Trees::Quadrupole tree(bodies.size(), theta, n_leaf_limit, n_group_limit);
    run(tree, user::GravityQuadrupoleKernel{eps2});
  } else {
    Trees::Monopole tree(bodies.size(), theta, n_leaf_limit, n_group_limit);
    run(tree, user::GravityMonopoleKernel{eps2});
  }
  return force;
}

HostRankForces hostTreeForcesOnRanks(const std::vector<user::Body>& mine, double theta, int n_leaf_limit,
                                     int n_group_limit, float eps2, bool quadrupole, double reuse_drift) {
  grove::ParticleSystem<user::Body> psys;
  for (const auto& b : mine) psys.add(b);
  grove::DomainInfo dinfo;
  HostRankForces out;
  auto run = [&](auto& tree, auto sp_kernel) {
    const user::GravityMonopoleKernel ep_kernel{eps2};
    if (reuse_drift > 0.0) {
      tree.calcForceAllAndWriteBack(ep_kernel, sp_kernel, psys, dinfo, true, grove::MAKE_LIST_FOR_REUSE);
      for (auto& b : psys) b.pos += reuse_drift * b.vel;
      tree.calcForceAllAndWriteBack(ep_kernel, sp_kernel, psys, dinfo, true, grove::REUSE_LIST);
    } else {
      tree.calcForceAllAndWriteBack(ep_kernel, sp_kernel, psys, dinfo);
    }
    out.force.resize(psys.size());
    for (std::size_t i = 0; i < psys.size(); ++i) {
      out.force[i].acc = grove::Vec3f(psys[i].acc);
      out.force[i].pot = static_cast<float>(psys[i].pot);
    }
    const grove::TreeProfile& p = tree.profile();
    out.let_ep_sent = p.let_ep_sent, out.let_sp_sent = p.let_sp_sent;
    out.let_ep_received = p.let_ep_received, out.let_sp_received = p.let_sp_received;
    out.interactions_ep = p.n_ep_ep, out.interactions_sp = p.n_ep_sp;
  };
  using Trees = grove::TreeForForceLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>;
  const std::size_t capacity = std::max<std::size_t>(mine.size(), 1);
  if (quadrupole) {
    Trees::Quadrupole tree(capacity, theta, n_leaf_limit, n_group_limit);
    run(tree, user::GravityQuadrupoleKernel{eps2});
  } else {
    Trees::Monopole tree(capacity, theta, n_leaf_limit, n_group_limit);
    run(tree, user::GravityMonopoleKernel{eps2});
  }
  return out;
}

std::vector<search_test::Body> searchBodies(std::size_t n, std::uint64_t seed) {
  const std::vector<user::Body> at = plummerSphere(n, seed);
  std::vector<search_test::Body> bodies(n);
  for (std::size_t k = 0; k < n; ++k) {
    bodies[k].id = at[k].id;
    bodies[k].pos = at[k].pos;
    bodies[k].r_search = search_test::searchRadiusOf(at[k].id);
  }
  return bodies;
}

namespace {
// The probe as a host kernel (EPJs one by one, superparticles by mass).
template <grove::LongSearchMode M>
struct HostProbe {
  template <class Source>
  void operator()(const search_test::EPI* epi, int n_i, const Source* src, int n_j, search_test::Probe* f) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) {
        if constexpr (std::is_same_v<Source, search_test::EPJ>) search_test::probeParticle<M>(epi[i], src[j], f[i]);
        else f[i].far_mass += src[j].getCharge();
      }
  }
};

template <grove::LongSearchMode M, class Tree>
HostSearchResult runHostSearchTree(const std::vector<search_test::Body>& mine, Tree& tree) {
  grove::ParticleSystem<search_test::Body> psys;
  for (const auto& b : mine) psys.add(b);
  grove::DomainInfo dinfo;
  tree.calcForceAllAndWriteBack(HostProbe<M>{}, HostProbe<M>{}, psys, dinfo);
  HostSearchResult out;
  for (const auto& b : psys) out.probe.push_back(b.probe);
  const grove::TreeProfile& p = tree.profile();
  out.let_ep_sent = p.let_ep_sent, out.let_sp_sent = p.let_sp_sent;
  out.interactions_ep = p.n_ep_ep, out.interactions_sp = p.n_ep_sp;
  return out;
}
}  // namespace

HostSearchResult hostSearchTree(const std::vector<search_test::Body>& mine, grove::LongSearchMode mode, double theta,
                                int n_leaf_limit, int n_group_limit) {
  using Trees = grove::TreeForForceLong<search_test::Probe, search_test::EPI, search_test::EPJ>;
  const std::size_t capacity = std::max<std::size_t>(mine.size(), 1);
  if (mode == grove::LongSearchMode::SCATTER) {
    Trees::MonopoleWithScatterSearch tree(capacity, theta, n_leaf_limit, n_group_limit);
    return runHostSearchTree<grove::LongSearchMode::SCATTER>(mine, tree);
  }
  if (mode == grove::LongSearchMode::SYMMETRY) {
    Trees::MonopoleWithSymmetrySearch tree(capacity, theta, n_leaf_limit, n_group_limit);
    return runHostSearchTree<grove::LongSearchMode::SYMMETRY>(mine, tree);
  }
  Trees::Monopole tree(capacity, theta, n_leaf_limit, n_group_limit);
  return runHostSearchTree<grove::LongSearchMode::SCATTER>(mine, tree);
}

std::vector<int> bruteForceNeighbours(const std::vector<search_test::Body>& mine,
                                      const std::vector<search_test::Body>& all, grove::LongSearchMode mode) {
  std::vector<int> count(mine.size(), 0);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t i = 0; i < mine.size(); ++i)
    for (const auto& b : all)
      count[i] += mode == grove::LongSearchMode::SYMMETRY
                      ? search_test::withinReach<grove::LongSearchMode::SYMMETRY>(mine[i].pos, mine[i].r_search, b.pos,
                                                                                  b.r_search)
                      : search_test::withinReach<grove::LongSearchMode::SCATTER>(mine[i].pos, mine[i].r_search, b.pos,
                                                                                 b.r_search);
  return count;
}

std::vector<grove::Vec3d> directAccelerations(const std::vector<user::Body>& bodies,
                                              const std::vector<std::size_t>& sample, double eps2) {
  std::vector<grove::Vec3d> acc(sample.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t s = 0; s < sample.size(); ++s) {
    const grove::Vec3d xi = bodies[sample[s]].pos;
    grove::Vec3d a;
    for (const auto& b : bodies) {
      const grove::Vec3d d = b.pos - xi;
      const double r2 = eps2 + grove::norm2(d);
      a += (b.mass / (r2 * std::sqrt(r2))) * d;
    }
    acc[s] = a;
  }
  return acc;
}

}  // namespace resident_test
