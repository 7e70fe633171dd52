// What grove's host side costs in a multiwalk step when the accelerator takes no time: the G2/G3
// steps of gravity_table2 (cold uniform sphere, leapfrog, index form, list reuse) with a
// dispatch/retrieve pair that does the host work of the CUDA template (the whole EPJ/SPJ arrays
// and each batch's EPI packed as float4 images, forces added back) but launches nothing. It runs
// on any machine and shows which host stage bounds a GPU step. Plain arguments:
//   multiwalk_host_benchmark [N=4194304] [theta=0.5] [n_leaf=16] [n_group=512] [n_walk=1000]
//                            [steps=16] [n_reuse=16] [order=tree|keep]
// order: the tree's ParticleOrder (TREE_ORDER or KEEP_ORDER, grove/core/particle_order.hpp).
// Prints one JSON line per step (the tree's stage profile) and a summary line.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cold_sphere.hpp"

namespace {

using Tree = grove::TreeForForceLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>::Monopole;
using Psys = grove::ParticleSystem<user::Body>;

struct Float4 {
  float x, y, z, w;
};

// The template's host work without a device: images of the whole arrays on send_flag, the
// batch's EPI images, and the forces (zero here) added back on retrieve.
class HostOnlyDevice {
 public:
  int dispatch(int, int n_walk, const user::GravityEPI** epi, const int* n_epi, const std::int32_t**, const int*,
               const std::int32_t**, const int*, const user::GravityEPJ* epj, int n_epj, const grove::SPJMonopole* spj,
               int n_spj, bool send_flag, bool) {
    if (send_flag) {
      epj_image_.resize(static_cast<std::size_t>(n_epj));
      spj_image_.resize(static_cast<std::size_t>(n_spj));
#pragma omp parallel for schedule(static)
      for (int k = 0; k < n_epj; ++k) epj_image_[k] = {epj[k].pos.x, epj[k].pos.y, epj[k].pos.z, epj[k].mass};
#pragma omp parallel for schedule(static)
      for (int k = 0; k < n_spj; ++k) {
        const grove::Vec3d p = spj[k].getPos();
        spj_image_[k] = {static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.z),
                         static_cast<float>(spj[k].getCharge())};
      }
    }
    if (n_walk == 0) return 0;  // grove's (FDPS's) send-only call
    offsets_.resize(static_cast<std::size_t>(n_walk) + 1);
    offsets_[0] = 0;
    for (int w = 0; w < n_walk; ++w) offsets_[w + 1] = offsets_[w] + n_epi[w];
    epi_image_.resize(offsets_[n_walk]);
#pragma omp parallel for schedule(dynamic, 8)
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) {
        const auto& p = epi[w][i].pos;
        epi_image_[offsets_[w] + i] = {p.x, p.y, p.z, 0.0f};
      }
    forces_.assign(offsets_[n_walk], Float4{});
    return 0;
  }
  int retrieve(int, int n_walk, const int* n_epi, user::GravityForce** force) {
#pragma omp parallel for schedule(dynamic, 16)
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) {
        const Float4 f = forces_[offsets_[w] + i];
        force[w][i].acc.x += f.x, force[w][i].acc.y += f.y, force[w][i].acc.z += f.z, force[w][i].pot += f.w;
      }
    return 0;
  }

 private:
  grove::LargeVector<Float4> epj_image_;
  std::vector<Float4> spj_image_, epi_image_, forces_;
  std::vector<std::size_t> offsets_;
};

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  auto arg = [&](int i, double fallback) { return argc > i ? std::atof(argv[i]) : fallback; };
  const auto n = static_cast<std::int64_t>(arg(1, 1 << 22));
  const double theta = arg(2, 0.5);
  const int n_leaf = static_cast<int>(arg(3, 16)), n_group = static_cast<int>(arg(4, 512));
  const int n_walk = static_cast<int>(arg(5, 1000)), steps = static_cast<int>(arg(6, 16));
  const int n_reuse = std::max(1, static_cast<int>(arg(7, 16)));
  const std::string order = argc > 8 ? argv[8] : "tree";
  const auto particle_order = order == "keep" ? grove::ParticleOrder::KEEP_ORDER : grove::ParticleOrder::TREE_ORDER;
  const double dt = 1.0 / 256.0;

  Psys psys;
  grove::DomainInfo dinfo;
  bench::makeColdSphere(n, psys, dinfo);
  Tree tree(psys.size(), theta, n_leaf, n_group);
  tree.setParticleOrder(particle_order);
  HostOnlyDevice device;
  auto dispatch = [&](auto... a) { return device.dispatch(a...); };
  auto retrieve = [&](auto... a) { return device.retrieve(a...); };
  grove::log("multiwalk_host_benchmark: N = {}, theta = {}, leaf {}, group {}, n_walk {}, n_reuse {}, {}, {} threads",
             n, theta, n_leaf, n_group, n_walk, n_reuse, grove::toString(particle_order), runtime.threadCount());

  double build_total = 0, reuse_total = 0, integrate_total = 0;
  double refresh = 0, moments = 0, device_host = 0, write_back = 0;  // sums over the reuse steps
  int builds = 0, reuses = 0;
  for (int s = 0; s <= steps; ++s) {  // step 0 warms up (first touch of every buffer)
    const bool rebuild = s % n_reuse == 0;
    const auto list_mode = n_reuse == 1 ? grove::MAKE_LIST
                                        : (rebuild ? grove::MAKE_LIST_FOR_REUSE : grove::REUSE_LIST);
    const double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < psys.size(); ++i) {
      psys[i].vel += (0.5 * dt) * psys[i].acc;
      psys[i].pos += dt * psys[i].vel;
    }
    const double t1 = omp_get_wtime();
    if (rebuild) psys.exchangeParticle(dinfo);
    const double t2 = omp_get_wtime();
    tree.calcForceAllAndWriteBackMultiWalkIndex(dispatch, retrieve, 4, psys, dinfo, n_walk, true, list_mode);
    const double t3 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < psys.size(); ++i) psys[i].vel += (0.5 * dt) * psys[i].acc;
    const double t4 = omp_get_wtime();
    grove::log(R"({{"step":{},"list_mode":"{}","step_s":{:.4f},"integrate_s":{:.4f},"exchange_s":{:.4f},)"
               R"("tree_call_s":{:.4f},"tree":{}}})",
               s, grove::toString(list_mode), t4 - t0, (t1 - t0) + (t4 - t3), t2 - t1, t3 - t2,
               tree.profile().json());
    if (s == 0) continue;
    (rebuild ? build_total : reuse_total) += t4 - t0;
    (rebuild ? builds : reuses) += 1;
    if (!rebuild) {
      const grove::TreeProfile& p = tree.profile();
      refresh += p.reorder, moments += p.local_moments, device_host += p.kernel, write_back += p.write_back;
    }
    integrate_total += (t1 - t0) + (t4 - t3);
  }
  const double per_reuse = reuses ? 1.0 / reuses : 0.0;
  grove::log(R"({{"summary":"multiwalk_host","n":{},"theta":{},"n_leaf":{},"n_group":{},"n_walk":{},"n_reuse":{},)"
             R"("particle_order":"{}","threads":{},"build_step_s":{:.4f},"reuse_step_s":{:.4f},"integrate_s":{:.4f},)"
             R"("reuse_refresh_s":{:.4f},"reuse_moments_s":{:.4f},"reuse_device_host_s":{:.4f},)"
             R"("reuse_write_back_s":{:.4f}}})",
             n, theta, n_leaf, n_group, n_walk, n_reuse, grove::toString(particle_order), runtime.threadCount(),
             builds ? build_total / builds : 0.0, reuse_total * per_reuse, integrate_total / std::max(1, steps),
             refresh * per_reuse, moments * per_reuse, device_host * per_reuse, write_back * per_reuse);
  return 0;
}
