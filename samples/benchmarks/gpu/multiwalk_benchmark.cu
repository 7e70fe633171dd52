// GPU multiwalk benchmark: interactions per second of the index-form gravity kernels on
// realistic walks (default 1000 walks of ~500 i-particles, ~3000 EPJ and ~1000 SPJ each), and of
// a plain all-pairs fp32 kernel for reference. Prints one JSON line per measurement.
//
//   kernel      the hand-written template kernel (user_templates/cuda/gravity_walk_kernel.cuh),
//               launched directly on device-resident data, for several block shapes
//   engine      grove's engine (grove/gpu/multiwalk/multiwalk_engine.cuh), one batch of all walks, lists
//               kept on the device: the kernel time from its CUDA events
//   dispatch    template and engine end to end as grove calls them (batches dispatched and
//               retrieved in turn): host packing + transfers + kernels, per step, for steps that
//               make lists and steps that reuse them
//   all_pairs   every body on every body, shared-memory tiles: the arithmetic ceiling of this physics
// Kernel times are CUDA-event times, after warm-up, median of --repeats. Each line carries a
// sampled accuracy check against double precision on the CPU (max_rel_err).
//
//   multiwalk_benchmark [--walks 1000] [--ni 500] [--nj 3000] [--nsp 1000] [--repeats 15] [--quick]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/gravity_interactions.cuh"
#include "cuda/gravity_multiwalk.cuh"
#include "cuda/gravity_multiwalk_gpu.h"
#include "cuda/gravity_walk_kernel.cuh"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_gpu.h"

namespace {

using grove::gpu::check;
using user::GravityEPI;
using user::GravityEPJ;
using user::GravityForce;
namespace uc = user::cuda;

constexpr float kEps2 = 1e-6f;

struct Options {
  int walks = 1000, ni = 500, nj = 3000, nsp = 1000, repeats = 15;
  int n_epj_all = 1 << 20, n_spj_all = 1 << 17;
  int all_pairs_n = 1 << 17;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto next = [&] { return a + 1 < argc ? std::atoi(argv[++a]) : 0; };
    if (arg == "--walks") o.walks = next();
    else if (arg == "--ni") o.ni = next();
    else if (arg == "--nj") o.nj = next();
    else if (arg == "--nsp") o.nsp = next();
    else if (arg == "--repeats") o.repeats = next();
    else if (arg == "--quick") o.walks = 200, o.repeats = 5, o.n_epj_all = 1 << 18, o.all_pairs_n = 1 << 15;
    else {
      std::fprintf(stderr, "usage: %s [--walks N] [--ni N] [--nj N] [--nsp N] [--repeats N] [--quick]\n", argv[0]);
      std::exit(arg == "--help" ? 0 : 2);
    }
  }
  return o;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// ---- realistic walks --------------------------------------------------------------------------------

template <class SPJ>
struct Walks {
  std::vector<GravityEPJ> epj_all;
  std::vector<SPJ> spj_all;
  std::vector<std::vector<GravityEPI>> epi;
  std::vector<std::vector<int>> id_epj, id_spj;
  std::int64_t interactions = 0;
  double mean_ni = 0, mean_nj = 0, mean_nsp = 0;
};

grove::Vec3d plummer(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double r;
  do r = 1.0 / std::sqrt(std::pow(u(rng), -2.0 / 3.0) - 1.0);
  while (!(r < 20.0));
  const double c = 2.0 * u(rng) - 1.0, phi = 2.0 * M_PI * u(rng), s = std::sqrt(1.0 - c * c);
  return {r * s * std::cos(phi), r * s * std::sin(phi), r * c};
}

// A tree walk's EPJ list is a few hundred runs of neighbouring (Morton-ordered) particles; its SPJ
// list, cells from all over the tree, in key order. Sizes vary by +-20% around the means.
template <class SPJ>
Walks<SPJ> makeWalks(const Options& o, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Walks<SPJ> g;
  std::vector<grove::Vec3d> pos(static_cast<std::size_t>(o.n_epj_all));
  for (auto& p : pos) p = plummer(rng);
  std::sort(pos.begin(), pos.end(), [](const auto& a, const auto& b) { return a.x < b.x; });  // some locality
  for (const auto& p : pos) g.epj_all.push_back({static_cast<grove::Vec3f>(p), 1.0f / float(o.n_epj_all)});
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < o.n_spj_all; ++k) {
    SPJ s;
    s.pos = 4.0 * plummer(rng), s.mass = 1e-3 * (1.5 + u(rng));
    if constexpr (requires { s.quad; })
      for (int q = 0; q < 3; ++q) {
        const grove::Vec3d a{0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng)};
        s.quad += grove::symmetricOuter(a, a, s.mass / 3.0);
      }
    g.spj_all.push_back(s);
  }
  std::uniform_real_distribution<double> vary(0.8, 1.2), off(-0.02, 0.02);
  std::uniform_int_distribution<int> start(0, o.n_epj_all - 1), sp(0, o.n_spj_all - 1);
  for (int w = 0; w < o.walks; ++w) {
    const int ni = std::max(1, int(o.ni * vary(rng))), nj = int(o.nj * vary(rng)), ns = int(o.nsp * vary(rng));
    const grove::Vec3d c = plummer(rng);
    std::vector<GravityEPI> group(static_cast<std::size_t>(ni));
    for (auto& e : group) e.pos = static_cast<grove::Vec3f>(c + grove::Vec3d{off(rng), off(rng), off(rng)});
    std::vector<int> j;
    while (static_cast<int>(j.size()) < nj) {
      const int s0 = start(rng);
      for (int k = 0; k < 64 && static_cast<int>(j.size()) < nj; ++k) j.push_back(std::min(s0 + k, o.n_epj_all - 1));
    }
    std::sort(j.begin(), j.end());
    std::vector<int> s(static_cast<std::size_t>(ns));
    for (int& id : s) id = sp(rng);
    std::sort(s.begin(), s.end());
    g.interactions += std::int64_t(ni) * (nj + ns);
    g.mean_ni += ni, g.mean_nj += nj, g.mean_nsp += ns;
    g.epi.push_back(std::move(group)), g.id_epj.push_back(std::move(j)), g.id_spj.push_back(std::move(s));
  }
  g.mean_ni /= o.walks, g.mean_nj /= o.walks, g.mean_nsp /= o.walks;
  return g;
}

// Double-precision reference for the first i-particle of a few walks; returns the largest
// relative acceleration error of `force` (walk-major, i-particles in order).
template <class SPJ>
double sampledError(const Walks<SPJ>& g, const std::vector<GravityForce>& force) {
  double worst = 0;
  std::size_t first = 0;
  for (std::size_t w = 0; w < g.epi.size(); ++w) {
    if (w % 97 == 0) {
      const grove::Vec3d xi(g.epi[w][0].pos);
      grove::Vec3d acc;
      for (int id : g.id_epj[w]) {
        const grove::Vec3d d = grove::Vec3d(g.epj_all[id].pos) - xi;
        const double r2 = grove::norm2(d) + kEps2, ri = 1.0 / std::sqrt(r2);
        acc += double(g.epj_all[id].mass) * ri * ri * ri * d;
      }
      for (int id : g.id_spj[w]) {
        const SPJ& s = g.spj_all[id];
        const grove::Vec3d r = xi - grove::Vec3d(static_cast<grove::Vec3f>(s.pos));
        const double r2 = grove::norm2(r) + kEps2, ri = 1.0 / std::sqrt(r2), r3 = ri * ri * ri, r5 = r3 * ri * ri;
        acc += -double(float(s.mass)) * r3 * r;
        if constexpr (requires { s.quad; }) {
          const grove::SymMat3d q = s.quad;
          const grove::Vec3d qr = q * r;
          const double rqr = grove::dot(r, qr), tr = q.trace();
          acc += 3.0 * r5 * qr - 7.5 * rqr * r5 * ri * ri * r + 1.5 * tr * r5 * r;
        }
      }
      worst = std::max(worst, grove::norm(grove::Vec3d(force[first].acc) - acc) / grove::norm(acc));
    }
    first += g.epi[w].size();
  }
  return worst;
}

std::string gpuName() { return grove::gpu::deviceInfo(grove::gpu::currentDevice()).name; }

template <class SPJ>
constexpr const char* expansion() {
  return std::is_same_v<SPJ, grove::SPJQuadrupole> ? "quadrupole" : "monopole";
}

template <class SPJ>
void printLine(const char* benchmark, const std::string& variant, const Walks<SPJ>& g, double seconds,
               double max_rel_err, const std::string& extra = "") {
  std::printf(
      "{\"benchmark\":\"%s\",\"variant\":\"%s\",\"expansion\":\"%s\",\"gpu\":\"%s\",\"n_walk\":%zu,"
      "\"mean_n_i\":%.1f,\"mean_n_j\":%.1f,\"mean_n_sp\":%.1f,\"interactions\":%lld,\"seconds\":%.6e,"
      "\"interactions_per_s\":%.4e,\"max_rel_err\":%.2e%s}\n",
      benchmark, variant.c_str(), expansion<SPJ>(), gpuName().c_str(), g.epi.size(), g.mean_ni, g.mean_nj,
      g.mean_nsp, static_cast<long long>(g.interactions), seconds, double(g.interactions) / seconds, max_rel_err,
      extra.c_str());
  std::fflush(stdout);
}

// ---- the template kernel on device-resident data ----------------------------------------------------

template <class SPJ>
struct DeviceWalks {
  using Image = grove::gpu::DeviceFormOf<SPJ>;
  grove::gpu::DeviceArray<float4> epj_all, force;
  grove::gpu::DeviceArray<uc::Position> epi;
  grove::gpu::DeviceArray<Image> spj_all;
  grove::gpu::DeviceArray<int> ids;
  grove::gpu::DeviceArray<uc::WalkRange> ranges;
  std::size_t n_j = 0, n_i = 0;

  explicit DeviceWalks(const Walks<SPJ>& g) {
    std::vector<float4> ej;
    std::vector<uc::Position> ei;
    std::vector<Image> sp;
    for (const auto& p : g.epj_all) ej.push_back(make_float4(p.pos.x, p.pos.y, p.pos.z, p.mass));
    for (const auto& s : g.spj_all) sp.push_back(grove::gpu::DeviceForm<SPJ>::make(s));
    std::vector<int> jid, sid;
    std::vector<uc::WalkRange> r;
    for (std::size_t w = 0; w < g.epi.size(); ++w) {
      r.push_back({int(ei.size()), int(g.epi[w].size()), int(jid.size()), int(g.id_epj[w].size()), int(sid.size()),
                   int(g.id_spj[w].size())});
      for (const auto& e : g.epi[w]) ei.push_back({e.pos.x, e.pos.y, e.pos.z});
      jid.insert(jid.end(), g.id_epj[w].begin(), g.id_epj[w].end());
      sid.insert(sid.end(), g.id_spj[w].begin(), g.id_spj[w].end());
    }
    n_j = jid.size(), n_i = ei.size();
    jid.insert(jid.end(), sid.begin(), sid.end());
    upload(epj_all, ej), upload(epi, ei), upload(spj_all, sp), upload(ids, jid), upload(ranges, r);
    force.allocate(n_i);
  }
  template <class T>
  static void upload(grove::gpu::DeviceArray<T>& d, const std::vector<T>& h) {
    d.allocate(h.size());
    check(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
};

template <int kThreads, int kIPerThread, class SPJ>
void benchTemplateKernel(const Walks<SPJ>& g, DeviceWalks<SPJ>& d, const Options& o) {
  using Image = grove::gpu::DeviceFormOf<SPJ>;
  std::vector<uc::WalkTask> tasks;
  std::vector<int> n_epi;
  for (const auto& e : g.epi) n_epi.push_back(int(e.size()));
  uc::appendTasks(n_epi.data(), int(n_epi.size()), kThreads * kIPerThread, tasks);
  grove::gpu::DeviceArray<uc::WalkTask> dtasks;
  DeviceWalks<SPJ>::upload(dtasks, tasks);
  grove::gpu::Stream stream;
  grove::gpu::Event start(true), stop(true);
  auto launch = [&] {
    uc::launchGravityWalks<kThreads, kIPerThread, Image>(
        stream.get(), int(tasks.size()), dtasks.data(), d.ranges.data(), d.epi.data(),
        uc::IndexedList<float4>{d.epj_all.data(), d.ids.data()},
        uc::IndexedList<Image>{d.spj_all.data(), d.ids.data() + d.n_j},
        kEps2, d.force.data());
    check(cudaGetLastError(), "kernel launch");
  };
  for (int k = 0; k < 3; ++k) launch();
  std::vector<double> t;
  for (int r = 0; r < o.repeats; ++r) {
    start.record(stream.get());
    launch();
    stop.record(stream.get());
    stop.synchronize();
    t.push_back(stop.secondsSince(start));
  }
  std::vector<float4> f(d.n_i);
  check(cudaMemcpy(f.data(), d.force.data(), d.n_i * sizeof(float4), cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::vector<GravityForce> forces(d.n_i);
  for (std::size_t i = 0; i < d.n_i; ++i) forces[i].acc = {f[i].x, f[i].y, f[i].z}, forces[i].pot = f[i].w;
  printLine("multiwalk_index_kernel", fmt::format("template_{}x{}", kThreads, kIPerThread), g, median(t),
            sampledError(g, forces), fmt::format(",\"threads\":{},\"i_per_thread\":{}", kThreads, kIPerThread));
}

// ---- dispatch/retrieve as grove calls them ----------------------------------------------------------

template <class SPJ>
struct Calls {  // the pointer arrays of batches of walks
  struct Batch {
    std::vector<const GravityEPI*> epi;
    std::vector<int> n_epi, n_epj, n_spj;
    std::vector<const int*> id_epj, id_spj;
    std::vector<GravityForce*> force;
  };
  std::vector<Batch> batches;
  std::vector<GravityForce> forces;

  Calls(const Walks<SPJ>& g, int walks_per_batch) {
    std::size_t n = 0;
    for (const auto& e : g.epi) n += e.size();
    forces.resize(n);
    std::size_t at = 0;
    for (std::size_t b = 0; b < g.epi.size(); b += walks_per_batch) {
      Batch batch;
      for (std::size_t w = b; w < std::min(g.epi.size(), b + walks_per_batch); ++w) {
        batch.epi.push_back(g.epi[w].data()), batch.n_epi.push_back(int(g.epi[w].size()));
        batch.id_epj.push_back(g.id_epj[w].data()), batch.n_epj.push_back(int(g.id_epj[w].size()));
        batch.id_spj.push_back(g.id_spj[w].data()), batch.n_spj.push_back(int(g.id_spj[w].size()));
        batch.force.push_back(forces.data() + at);
        at += g.epi[w].size();
      }
      batches.push_back(std::move(batch));
    }
  }

  // One step: dispatch(k) then retrieve(k - 1), tag = k % tag_max.
  void step(uc::GravityMultiwalkInterface<SPJ>& mw, const Walks<SPJ>& g, int tag_max, bool lists_unchanged) {
    std::fill(forces.begin(), forces.end(), GravityForce{});
    auto dispatch = mw.dispatch();
    auto retrieve = mw.retrieve();
    for (std::size_t k = 0; k <= batches.size(); ++k) {
      if (k < batches.size()) {
        Batch& b = batches[k];
        dispatch(int(k) % tag_max, int(b.epi.size()), b.epi.data(), b.n_epi.data(), b.id_epj.data(), b.n_epj.data(),
                 b.id_spj.data(), b.n_spj.data(), g.epj_all.data(), int(g.epj_all.size()), g.spj_all.data(),
                 int(g.spj_all.size()), k == 0, lists_unchanged);
      }
      if (k > 0) {
        Batch& b = batches[k - 1];
        retrieve(int(k - 1) % tag_max, int(b.epi.size()), b.n_epi.data(), b.force.data());
      }
    }
  }
};

// The engine's kernel alone: one batch of every walk, lists kept, kernel time from its events.
template <class SPJ>
void benchEngineKernel(const Walks<SPJ>& g, const Options& o) {
  auto engine = uc::makeGravityEngine<SPJ>(kEps2);
  Calls<SPJ> calls(g, int(g.epi.size()));
  calls.step(*engine, g, 1, false);
  for (int k = 0; k < 2; ++k) calls.step(*engine, g, 1, true);
  std::vector<double> t;
  for (int r = 0; r < o.repeats; ++r) {
    engine->resetStats();
    calls.step(*engine, g, 1, true);
    t.push_back(engine->stats().kernel_seconds);
  }
  printLine("multiwalk_index_kernel", "engine_64x1", g, median(t), sampledError(g, calls.forces));
}

// Whole steps, host clock: packing, transfers and kernels overlapped as grove overlaps them.
template <class SPJ>
void benchDispatch(const char* variant, uc::GravityMultiwalkInterface<SPJ>& mw, const Walks<SPJ>& g,
                   const Options& o, int walks_per_batch, int tag_max) {
  Calls<SPJ> calls(g, walks_per_batch);
  for (bool reuse : {false, true}) {
    calls.step(mw, g, tag_max, false);  // warm-up, and the MAKE step whose lists a reuse step keeps
    std::vector<double> wall, kernel;
    for (int r = 0; r < o.repeats; ++r) {
      mw.resetStats();
      const auto t0 = std::chrono::steady_clock::now();
      calls.step(mw, g, tag_max, reuse);
      wall.push_back(secondsSince(t0));
      kernel.push_back(mw.stats().kernel_seconds);
    }
    printLine("multiwalk_index_dispatch", fmt::format("{}_{}", variant, reuse ? "reuse_list" : "make_list"), g,
              median(wall), sampledError(g, calls.forces),
              fmt::format(",\"walks_per_batch\":{},\"tag_max\":{},\"kernel_seconds_sum\":{:.6e}", walks_per_batch,
                          tag_max, median(kernel)));
  }
}

// ---- all pairs ------------------------------------------------------------------------------------

template <int kThreads>
__global__ void __launch_bounds__(kThreads) allPairsKernel(const float4* __restrict__ body, int n, float eps2,
                                                           float4* __restrict__ out) {
  __shared__ float4 tile[kThreads];
  const int i = blockIdx.x * kThreads + threadIdx.x;
  const float4 xi = body[min(i, n - 1)];
  float4 f = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int base = 0; base < n; base += kThreads) {
    tile[threadIdx.x] = body[min(base + int(threadIdx.x), n - 1)];
    __syncthreads();
#pragma unroll 8
    for (int q = 0; q < kThreads; ++q)
      uc::addMonopole(xi.x, xi.y, xi.z, tile[q].x, tile[q].y, tile[q].z, tile[q].w, eps2, f.x, f.y, f.z, f.w);
    __syncthreads();
  }
  if (i < n) out[i] = f;
}

void benchAllPairs(const Options& o) {
  const int n = o.all_pairs_n;  // a multiple of the block size
  std::mt19937_64 rng(3);
  std::vector<float4> h(static_cast<std::size_t>(n));
  for (auto& b : h) {
    const grove::Vec3d p = plummer(rng);
    b = make_float4(float(p.x), float(p.y), float(p.z), 1.0f / float(n));
  }
  grove::gpu::DeviceArray<float4> body, out;
  body.allocate(h.size()), out.allocate(h.size());
  check(cudaMemcpy(body.data(), h.data(), h.size() * sizeof(float4), cudaMemcpyHostToDevice), "cudaMemcpy");
  grove::gpu::Event start(true), stop(true);
  constexpr int kThreads = 256;
  auto launch = [&] {
    allPairsKernel<kThreads><<<n / kThreads, kThreads>>>(body.data(), n, kEps2, out.data());
    check(cudaGetLastError(), "allPairsKernel launch");
  };
  for (int k = 0; k < 2; ++k) launch();
  std::vector<double> t;
  for (int r = 0; r < std::max(3, o.repeats / 2); ++r) {
    start.record(nullptr);
    launch();
    stop.record(nullptr);
    stop.synchronize();
    t.push_back(stop.secondsSince(start));
  }
  std::vector<float4> f(h.size());
  check(cudaMemcpy(f.data(), out.data(), f.size() * sizeof(float4), cudaMemcpyDeviceToHost), "cudaMemcpy");
  double worst = 0;
  for (int i = 0; i < n; i += n / 8) {
    grove::Vec3d acc;
    for (int j = 0; j < n; ++j) {
      const grove::Vec3d d{double(h[j].x) - h[i].x, double(h[j].y) - h[i].y, double(h[j].z) - h[i].z};
      const double ri = 1.0 / std::sqrt(grove::norm2(d) + kEps2);
      acc += double(h[j].w) * ri * ri * ri * d;
    }
    worst = std::max(worst, grove::norm(grove::Vec3d{f[i].x, f[i].y, f[i].z} - acc) / grove::norm(acc));
  }
  const double interactions = double(n) * double(n), s = median(t);
  std::printf(
      "{\"benchmark\":\"all_pairs_fp32\",\"variant\":\"tiled_%d\",\"gpu\":\"%s\",\"n\":%d,\"interactions\":%.0f,"
      "\"seconds\":%.6e,\"interactions_per_s\":%.4e,\"max_rel_err\":%.2e}\n",
      kThreads, gpuName().c_str(), n, interactions, s, interactions / s, worst);
  std::fflush(stdout);
}

template <class SPJ>
void benchExpansion(const Options& o) {
  const Walks<SPJ> g = makeWalks<SPJ>(o, 42);
  {
    DeviceWalks<SPJ> d(g);
    benchTemplateKernel<64, 1>(g, d, o);
    benchTemplateKernel<128, 1>(g, d, o);
    benchTemplateKernel<256, 1>(g, d, o);
    benchTemplateKernel<64, 2>(g, d, o);
    benchTemplateKernel<128, 2>(g, d, o);
  }
  benchEngineKernel(g, o);
  auto raw = uc::makeGravityMultiwalk<SPJ>(kEps2);
  benchDispatch("template", *raw, g, o, 250, 2);
  auto engine = uc::makeGravityEngine<SPJ>(kEps2);
  benchDispatch("engine", *engine, g, o, 250, 2);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (grove::gpu::deviceCount() == 0) {
    std::printf("{\"benchmark\":\"multiwalk\",\"skipped\":\"no CUDA device\"}\n");
    return 0;
  }
  try {
    benchAllPairs(o);
    benchExpansion<grove::SPJMonopole>(o);
    benchExpansion<grove::SPJQuadrupole>(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multiwalk_benchmark: %s\n", e.what());
    return 1;
  }
  return 0;
}
