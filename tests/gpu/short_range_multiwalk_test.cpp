// grove's multiwalk engine in its short-range form (no superparticles): neighbour counts and a
// density sum against a CPU loop over the same lists, plain vs index forms, reuse and blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "density_engine_gpu.h"
#include "grove/gpu/device_gpu.h"

namespace {

using namespace grove::gpu_testing;

struct DensityWalks {
  std::vector<DensityEPJ> epj_all;
  std::vector<std::vector<DensityEPI>> epi;
  std::vector<std::vector<int>> ids;
  std::vector<std::vector<DensityEPJ>> epj;
};

// Particles in a unit cube; each walk a small group with a candidate list (a cube around it),
// as a short-range tree walk gives.
DensityWalks makeDensityWalks(std::uint64_t seed, int n_walk = 40, int n_all = 20000) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f), jitter(-0.02f, 0.02f), h(0.03f, 0.08f);
  DensityWalks d;
  for (int k = 0; k < n_all; ++k) d.epj_all.push_back({{u(rng), u(rng), u(rng)}, 1.0f + u(rng)});
  for (int w = 0; w < n_walk; ++w) {
    const grove::Vec3f c{u(rng), u(rng), u(rng)};
    std::vector<DensityEPI> group(static_cast<std::size_t>(w == 0 ? 1 : 1 + (w * 37) % 300));
    for (DensityEPI& e : group) e = {{c.x + jitter(rng), c.y + jitter(rng), c.z + jitter(rng)}, h(rng)};
    std::vector<int> ids;
    for (int k = 0; k < n_all; ++k) {
      const grove::Vec3f p = d.epj_all[k].pos;
      if (std::abs(p.x - c.x) < 0.12f && std::abs(p.y - c.y) < 0.12f && std::abs(p.z - c.z) < 0.12f) ids.push_back(k);
    }
    std::vector<DensityEPJ> gathered;
    for (int id : ids) gathered.push_back(d.epj_all[id]);
    d.epi.push_back(group), d.ids.push_back(ids), d.epj.push_back(gathered);
  }
  return d;
}

std::vector<DensityForce> run(DensityMultiwalk& mw, const DensityWalks& d, bool index_form, bool lists_unchanged,
                              int walks_per_batch = 8) {
  std::size_t n = 0;
  std::vector<std::size_t> first;
  for (const auto& g : d.epi) first.push_back(n), n += g.size();
  std::vector<DensityForce> forces(n);
  auto dispatch = mw.dispatch();
  auto dispatch_plain = mw.dispatchPlain();
  auto retrieve = mw.retrieve();
  struct Batch {
    std::vector<const DensityEPI*> epi;
    std::vector<int> n_epi, n_epj;
    std::vector<const int*> ids;
    std::vector<const DensityEPJ*> epj;
    std::vector<DensityForce*> force;
  };
  std::vector<Batch> batches;
  const int n_walk = static_cast<int>(d.epi.size());
  for (int b = 0; b < n_walk; b += walks_per_batch) {
    Batch batch;
    for (int w = b; w < std::min(n_walk, b + walks_per_batch); ++w) {
      batch.epi.push_back(d.epi[w].data()), batch.n_epi.push_back(static_cast<int>(d.epi[w].size()));
      batch.ids.push_back(d.ids[w].data()), batch.n_epj.push_back(static_cast<int>(d.ids[w].size()));
      batch.epj.push_back(d.epj[w].data()), batch.force.push_back(forces.data() + first[w]);
    }
    batches.push_back(batch);
  }
  for (std::size_t k = 0; k <= batches.size(); ++k) {
    if (k < batches.size()) {
      Batch& b = batches[k];
      const int size = static_cast<int>(b.epi.size());
      if (index_form)
        dispatch(static_cast<int>(k % 2), size, b.epi.data(), b.n_epi.data(), b.ids.data(), b.n_epj.data(),
                 d.epj_all.data(), static_cast<int>(d.epj_all.size()), k == 0, lists_unchanged);
      else
        dispatch_plain(static_cast<int>(k % 2), size, b.epi.data(), b.n_epi.data(), b.epj.data(), b.n_epj.data());
    }
    if (k > 0) {
      Batch& b = batches[k - 1];
      retrieve(static_cast<int>((k - 1) % 2), static_cast<int>(b.epi.size()), b.n_epi.data(), b.force.data());
    }
  }
  return forces;
}

bool bitwiseEqual(const std::vector<DensityForce>& a, const std::vector<DensityForce>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(DensityForce)) == 0;
}

class ShortRangeEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(ShortRangeEngineTest, NeighbourCountsAndDensitiesMatchCpuLoop) {
  const DensityWalks d = makeDensityWalks(5);
  auto engine = makeDensityEngine();
  const auto got = run(*engine, d, true, false);
  std::size_t at = 0;
  int total_neighbours = 0;
  double max_rel = 0;
  for (std::size_t w = 0; w < d.epi.size(); ++w)
    for (const DensityEPI& e : d.epi[w]) {
      // Pairs within a relative 1e-5 of the radius may round either way: count them apart.
      int certain = 0, borderline = 0;
      double density = 0, rounding = 0;
      // Rounding bound of the device's fp32 evaluation, first order in u = 2^-24: a term
      // m t^3 with t = 1 - r^2/h^2 inherits r^2's rounding (about 6u relative) amplified by the
      // cancellation in t (1/t), cubed, plus its own few operations: u (21 / t + 4) relative.
      // The sequential sum of n terms adds n u.
      const double u = std::ldexp(1.0, -24);
      for (const DensityEPJ& j : d.epj[w]) {
        const double dx = j.pos.x - e.pos.x, dy = j.pos.y - e.pos.y, dz = j.pos.z - e.pos.z;
        const double r2 = dx * dx + dy * dy + dz * dz, h2 = double(e.h) * double(e.h);
        if (std::abs(r2 - h2) < 1e-5 * h2) {
          ++borderline;
        } else if (r2 < h2) {
          const double t = 1.0 - r2 / h2, term = j.mass * densityWeight(r2, h2);
          ++certain, density += term, rounding += term * u * (21.0 / t + 4.0);
        }
      }
      const DensityForce& f = got[at++];
      EXPECT_GE(f.neighbours, certain);
      EXPECT_LE(f.neighbours, certain + borderline);
      if (density > 0) {
        const double bound = rounding / density + (certain + borderline) * u;
        max_rel = std::max(max_rel, std::abs(f.density - density) / density / bound);
      }
      total_neighbours += certain;
    }
  EXPECT_LE(max_rel, 1.0);  // every particle within its own fp32 rounding bound
  EXPECT_GT(total_neighbours, 1000);  // the test exercises real neighbours
}

TEST_F(ShortRangeEngineTest, PlainIndexReusedAndBlockedRunsAreBitwiseEqual) {
  const DensityWalks d = makeDensityWalks(6);
  auto engine = makeDensityEngine();
  const auto index = run(*engine, d, true, false);
  EXPECT_TRUE(bitwiseEqual(index, run(*engine, d, false, false))) << "plain form";
  EXPECT_TRUE(bitwiseEqual(index, run(*engine, d, true, true))) << "lists unchanged";
  EXPECT_GT(engine->stats().lists_reused, 0);
  grove::gpu::MultiwalkOptions tiny;  // room for the resident array and 16 KB per stream
  tiny.resident_fraction = 0.95;
  tiny.device_memory_budget = d.epj_all.size() * sizeof(DensityEPJ) + 2 * 16 * 1024;
  auto blocked = makeDensityEngine(tiny);
  EXPECT_TRUE(bitwiseEqual(index, run(*blocked, d, true, false))) << "in blocks";
  EXPECT_GT(blocked->stats().blocks, blocked->stats().batches);
}

}  // namespace
