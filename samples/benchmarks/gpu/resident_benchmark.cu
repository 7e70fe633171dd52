// The GPU-resident pipeline's benchmark (grove/gpu/resident.cuh): the cold uniform sphere with the
// user template's gravity, every stage on one GPU, printed as JSON lines.
//
//   rebuild  steps of kick + drift (forEach) -> full tree build -> lists and the list kernel (or
//            the fused walk) -> write-back -> kick, each step from scratch (MAKE_LIST)
//   reuse    cycles of --reuse steps: one MAKE_LIST_FOR_REUSE step, then REUSE_LIST steps
//            (refresh from FP, moments, the list kernel on the kept lists)
// Each line has the per-stage device times (CUDA events; medians over the steps), particles/s,
// interactions/s and the median and 99th-percentile relative force error against direct
// summation in double on the device (sampled particles), and with --cpu-reference the same errors
// of grove's CPU tree at the same settings (host threads: OMP_NUM_THREADS). device_bytes is the
// particle system's and the tree's device memory after the last step; device_bytes_by splits it:
// the particle system, then the tree's parts (ResidentTreeLong::DeviceBytesByPart).
//
//   resident_benchmark [--n N] [--theta T] [--leaf L] [--group G] [--steps S] [--reuse R]
//                      [--cycles C] [--samples K] [--quadrupole] [--opening fdps|nakasato|rmax] [--fused-walk]
//                      [--cpu-reference] [--group-target T] [--reorder copy|in-place]
// --opening: the opening test (ResidentTreeOptions::opening, walk/opening_criterion.hpp; the CPU
// reference uses the same): fdps (default), nakasato (also --nakasato), or rmax (r_max / theta).
// --fused-walk: rebuilt steps walk and evaluate in one kernel (ResidentTreeOptions::fused_walk)
// instead of building lists for the list kernel. --group-target: groups larger than T are cut
// into equal runs (ResidentTreeOptions::group_target; 0, the default, keeps FDPS's cell groups).
// --reorder: how the particle system reorders (DeviceParticleSystem::setReorderMemory): copy (the
// default: a second array of the particles) or in-place (16 bytes of scratch per particle), for
// the largest runs.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cuda/gravity_interactions.cuh"
#include "gravity_leapfrog.hpp"
#include "grove/force/resident_tree_long.cuh"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/for_each.cuh"
#include "grove/runtime/runtime.hpp"
#include "resident_reference.hpp"

namespace {

struct Options {
  std::size_t n = std::size_t{1} << 22;
  double theta = 0.5;
  int leaf = 16, group = 512, steps = 8, reuse = 16, cycles = 2, samples = 4096, group_target = 0;
  bool quadrupole = false, cpu_reference = false, fused_walk = false;
  grove::gpu::ReorderMemory reorder = grove::gpu::ReorderMemory::kCopy;
  grove::OpeningRule opening = grove::OpeningRule::kFdps;
  double dt = 1.0 / 256.0;
  float eps = 1.0f / 256.0f;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto next = [&] { return a + 1 < argc ? std::atof(argv[++a]) : 0.0; };
    if (arg == "--n") o.n = static_cast<std::size_t>(next());
    else if (arg == "--theta") o.theta = next();
    else if (arg == "--leaf") o.leaf = static_cast<int>(next());
    else if (arg == "--group") o.group = static_cast<int>(next());
    else if (arg == "--steps") o.steps = static_cast<int>(next());
    else if (arg == "--reuse") o.reuse = static_cast<int>(next());
    else if (arg == "--cycles") o.cycles = static_cast<int>(next());
    else if (arg == "--samples") o.samples = static_cast<int>(next());
    else if (arg == "--quadrupole") o.quadrupole = true;
    else if (arg == "--nakasato") o.opening = grove::OpeningRule::kNakasato;
    else if (arg == "--opening" && a + 1 < argc) {
      const std::string rule = argv[++a];
      if (rule == "fdps") o.opening = grove::OpeningRule::kFdps;
      else if (rule == "nakasato") o.opening = grove::OpeningRule::kNakasato;
      else if (rule == "rmax") o.opening = grove::OpeningRule::kRmax;
      else {
        std::fprintf(stderr, "--opening takes fdps, nakasato or rmax (got %s)\n", rule.c_str());
        std::exit(2);
      }
    }
    else if (arg == "--fused-walk") o.fused_walk = true;
    else if (arg == "--reorder" && a + 1 < argc) {
      const std::string how = argv[++a];
      if (how == "copy") o.reorder = grove::gpu::ReorderMemory::kCopy;
      else if (how == "in-place") o.reorder = grove::gpu::ReorderMemory::kInPlace;
      else {
        std::fprintf(stderr, "--reorder takes copy or in-place (got %s)\n", how.c_str());
        std::exit(2);
      }
    }
    else if (arg == "--group-target") o.group_target = static_cast<int>(next());
    else if (arg == "--cpu-reference") o.cpu_reference = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--n N] [--theta T] [--leaf L] [--group G] [--steps S] [--reuse R] [--cycles C] "
                   "[--samples K] [--quadrupole] [--opening fdps|nakasato|rmax] [--fused-walk] [--cpu-reference] "
                   "[--group-target T] [--reorder copy|in-place]\n",
                   argv[0]);
      std::exit(2);
    }
  }
  return o;
}

struct KickDrift {
  double dt;
  GROVE_HOST_DEVICE void operator()(user::Body& b) const {
    b.vel += (0.5 * dt) * b.acc;
    b.pos += dt * b.vel;
  }
};

// Accelerations by direct summation in double for the bodies at positions sample[s] (one block
// per sampled body; the body itself contributes nothing, d = 0).
__global__ void directSum(const user::Body* __restrict__ bodies, std::size_t n, const std::uint32_t* __restrict__ sample,
                          double eps2, grove::Vec3d* __restrict__ acc) {
  const grove::Vec3d xi = bodies[sample[blockIdx.x]].pos;
  double ax = 0, ay = 0, az = 0;
  for (std::size_t j = threadIdx.x; j < n; j += blockDim.x) {
    const double dx = bodies[j].pos.x - xi.x, dy = bodies[j].pos.y - xi.y, dz = bodies[j].pos.z - xi.z;
    const double r2 = eps2 + dx * dx + dy * dy + dz * dz;
    const double w = bodies[j].mass / (r2 * sqrt(r2));
    ax += w * dx, ay += w * dy, az += w * dz;
  }
  __shared__ double sx[256], sy[256], sz[256];
  sx[threadIdx.x] = ax, sy[threadIdx.x] = ay, sz[threadIdx.x] = az;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      sx[threadIdx.x] += sx[threadIdx.x + s];
      sy[threadIdx.x] += sy[threadIdx.x + s];
      sz[threadIdx.x] += sz[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) acc[blockIdx.x] = {sx[0], sy[0], sz[0]};
}

// The q-quantile of v (0 <= q < 1) as the element at floor(q * size) of the sorted values: the
// median at q = 0.5 (the upper one of an even count, as before), the p99 at q = 0.99.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  const auto k = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

// Median relative acceleration error of the device bodies against direct summation (and every
// sample's error in by_id_errors, the bodies' ids in ids).
double medianErrorVsDirect(const grove::gpu::DeviceParticleSystem<user::Body>& psys, int samples, double eps2,
                           std::vector<double>* by_id_errors = nullptr, std::vector<std::int64_t>* ids = nullptr) {
  const std::size_t n = psys.size();
  std::vector<std::uint32_t> sample;
  const std::size_t stride = std::max<std::size_t>(1, n / static_cast<std::size_t>(samples));
  for (std::size_t i = 0; i < n && sample.size() < static_cast<std::size_t>(samples); i += stride)
    sample.push_back(static_cast<std::uint32_t>(i));
  grove::gpu::DeviceVector<std::uint32_t> d_sample;
  d_sample.assign(sample.data(), sample.size(), psys.stream());
  grove::gpu::DeviceVector<grove::Vec3d> d_acc(sample.size());
  directSum<<<static_cast<unsigned>(sample.size()), 256, 0, psys.stream()>>>(psys.data(), n, d_sample.data(), eps2,
                                                                               d_acc.data());
  grove::gpu::check(cudaGetLastError(), "directSum launch");
  const std::vector<grove::Vec3d> direct = d_acc.toHost(psys.stream());
  const std::vector<user::Body> bodies = psys.download();
  std::vector<double> errors;
  for (std::size_t s = 0; s < sample.size(); ++s) {
    const user::Body& b = bodies[sample[s]];
    errors.push_back(grove::norm(b.acc - direct[s]) / grove::norm(direct[s]));
    if (ids) ids->push_back(b.id);
  }
  if (by_id_errors) *by_id_errors = errors;
  return median(errors);
}

template <class Tree, class Sp>
void run(const Options& o, Sp sp) {
  const float eps2 = o.eps * o.eps;
  const user::cuda::GravityEpInteraction ep{eps2};
  std::vector<user::Body> bodies = resident_test::coldSphere(o.n, 1);
  grove::gpu::Stream stream;
  const grove::Gpu policy{stream.get()};
  grove::gpu::DeviceParticleSystem<user::Body> psys(policy);
  psys.setReorderMemory(o.reorder);
  psys.upload(bodies);
  grove::gpu::ResidentTreeOptions options;
  options.opening = o.opening;
  options.fused_walk = o.fused_walk;
  options.group_target = o.group_target;
  Tree tree(o.theta, o.leaf, o.group, policy, options);

  // Accuracy at t = 0 (and the CPU tree's, same settings, when asked).
  tree.calcForceAllAndWriteBack(psys, ep, sp, grove::MAKE_LIST);
  std::vector<std::int64_t> ids;
  std::vector<double> gpu_errors;
  const double error = medianErrorVsDirect(psys, o.samples, static_cast<double>(eps2), &gpu_errors, &ids);
  const double p99_error = quantile(gpu_errors, 0.99);
  double cpu_error = -1.0, cpu_p99_error = -1.0;
  if (o.cpu_reference) {
    const auto cpu = resident_test::hostTreeForces(bodies, o.theta, o.leaf, o.group, eps2, o.quadrupole, o.opening);
    // The same sampled bodies (by id: the device reordered its copy).
    std::vector<std::size_t> sample_index;
    for (std::int64_t id : ids) sample_index.push_back(static_cast<std::size_t>(id));
    const auto direct = resident_test::directAccelerations(bodies, sample_index, static_cast<double>(eps2));
    std::vector<double> cpu_errors;
    for (std::size_t s = 0; s < ids.size(); ++s)
      cpu_errors.push_back(grove::norm(grove::Vec3d(cpu[sample_index[s]].acc) - direct[s]) / grove::norm(direct[s]));
    cpu_error = median(cpu_errors);
    cpu_p99_error = quantile(cpu_errors, 0.99);
  }

  grove::gpu::Event t0(true), t1(true), t2(true);
  auto json = [&](const char* mode, const std::vector<grove::gpu::ResidentProfile>& profiles,
                  const std::vector<double>& step_seconds, const std::vector<double>& integrate_seconds) {
    auto med = [&](auto field) {
      std::vector<double> v;
      for (const auto& p : profiles) v.push_back(field(p));
      return median(v);
    };
    double mean_step = 0;
    for (double s : step_seconds) mean_step += s;
    mean_step /= static_cast<double>(step_seconds.size());
    const double med_step = median(step_seconds);
    const auto& last = profiles.back();
    double interactions = 0;
    for (const auto& p : profiles) interactions += static_cast<double>(p.interactions());
    interactions /= static_cast<double>(profiles.size());
    const grove::gpu::DeviceInfo info = grove::gpu::deviceInfo(grove::gpu::currentDevice());
    const auto by = tree.deviceBytesByPart();  // now, after the last step (device_bytes: its profile)
    std::printf(
        "{\"bench\":\"resident\",\"mode\":\"%s\",\"gpu\":\"%s\",\"n\":%zu,\"theta\":%g,\"leaf\":%d,\"group\":%d,"
        "\"group_target\":%d,"
        "\"moment\":\"%s\",\"opening\":\"%s\",\"walk\":\"%s\",\"reorder_memory\":\"%s\",\"steps\":%zu,\"step_ms_mean\":%.3f,\"step_ms_median\":%.3f,"
        "\"ms\":{\"root\":%.3f,\"keys\":%.3f,\"sort\":%.3f,\"reorder\":%.3f,\"link\":%.3f,\"moments\":%.3f,"
        "\"groups\":%.3f,\"lists\":%.3f,\"force\":%.3f,\"write_back\":%.3f,\"integrate\":%.3f,\"tree_total\":%.3f},"
        "\"cells\":%lld,\"groups_n\":%lld,\"interactions_per_particle\":%.1f,\"ep_per_particle\":%.1f,"
        "\"sp_per_particle\":%.1f,\"interactions_per_s\":%.4e,"
        "\"particles_per_s\":%.4e,\"median_error\":%.4e,\"p99_error\":%.4e,\"cpu_median_error\":%.4e,"
        "\"cpu_p99_error\":%.4e,\"device_bytes\":%lld,"
        "\"bytes_per_particle\":%.1f,\"device_bytes_by\":{\"particle_system\":%zu,\"keys\":%zu,\"particles\":%zu,"
        "\"cells\":%zu,\"groups\":%zu,\"lists\":%zu,\"force\":%zu,\"let\":%zu}}\n",
        mode, info.name.c_str(), o.n, o.theta, o.leaf, o.group, o.group_target, o.quadrupole ? "quadrupole" : "monopole",
        grove::openingRuleName(o.opening), o.fused_walk ? "fused" : "lists",
        o.reorder == grove::gpu::ReorderMemory::kCopy ? "copy" : "in-place", step_seconds.size(), 1e3 * mean_step, 1e3 * med_step,
        1e3 * med([](const auto& p) { return p.root; }), 1e3 * med([](const auto& p) { return p.keys; }),
        1e3 * med([](const auto& p) { return p.sort; }), 1e3 * med([](const auto& p) { return p.reorder; }),
        1e3 * med([](const auto& p) { return p.link; }), 1e3 * med([](const auto& p) { return p.moments; }),
        1e3 * med([](const auto& p) { return p.groups; }), 1e3 * med([](const auto& p) { return p.lists; }),
        1e3 * med([](const auto& p) { return p.force; }), 1e3 * med([](const auto& p) { return p.write_back; }),
        1e3 * median(integrate_seconds), 1e3 * med([](const auto& p) { return p.total; }),
        static_cast<long long>(last.n_cells), static_cast<long long>(last.n_groups),
        interactions / static_cast<double>(o.n), static_cast<double>(last.interactions_ep) / static_cast<double>(o.n),
        static_cast<double>(last.interactions_sp) / static_cast<double>(o.n),
        interactions / med([](const auto& p) { return p.force; }),
        static_cast<double>(o.n) / mean_step, error, p99_error, cpu_error, cpu_p99_error,
        static_cast<long long>(last.device_bytes + static_cast<std::int64_t>(psys.deviceBytes())),
        static_cast<double>(last.device_bytes + static_cast<std::int64_t>(psys.deviceBytes())) /
            static_cast<double>(o.n),
        psys.deviceBytes(), by.keys, by.particles, by.cells, by.groups, by.lists, by.force, by.let);
    std::fflush(stdout);
  };

  // One leapfrog step on the device: kick + drift, force (list mode), kick. Returns seconds.
  std::vector<double> integrate;
  auto step = [&](grove::InteractionListMode mode) {
    t0.record(stream.get());
    grove::gpu::forEach(policy, psys, KickDrift{o.dt});
    t1.record(stream.get());
    tree.calcForceAllAndWriteBack(psys, ep, sp, mode);
    t2.record(stream.get());
    grove::gpu::forEach(policy, psys, user::Kick{0.5 * o.dt});
    grove::gpu::Event t3(true);
    t3.record(stream.get());
    t3.synchronize();
    integrate.push_back(t1.secondsSince(t0) + t3.secondsSince(t2));
    return t3.secondsSince(t0);
  };

  {  // rebuild every step
    std::vector<grove::gpu::ResidentProfile> profiles;
    std::vector<double> seconds;
    integrate.clear();
    step(grove::MAKE_LIST);  // warm-up (allocations)
    integrate.clear();
    for (int s = 0; s < o.steps; ++s) {
      seconds.push_back(step(grove::MAKE_LIST));
      profiles.push_back(tree.profile());
    }
    json("rebuild", profiles, seconds, integrate);
  }
  if (o.reuse > 1 && o.cycles > 0) {  // list reuse
    std::vector<grove::gpu::ResidentProfile> profiles;
    std::vector<double> seconds;
    integrate.clear();
    for (int c = 0; c < o.cycles; ++c) {
      for (int s = 0; s < o.reuse; ++s) {
        seconds.push_back(step(s == 0 ? grove::MAKE_LIST_FOR_REUSE : grove::REUSE_LIST));
        profiles.push_back(tree.profile());
      }
    }
    json("reuse", profiles, seconds, integrate);
  }
}

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);  // the CPU reference tree runs through grove's communicator
  const Options o = parse(argc, argv);
  if (grove::gpu::deviceCount() == 0) {
    std::printf("{\"bench\":\"resident\",\"skipped\":\"no CUDA device\"}\n");
    return 0;
  }
  try {
    const float eps2 = o.eps * o.eps;
    using Monopole = grove::gpu::ResidentTreeLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>;
    using Quadrupole = grove::gpu::ResidentTreeLong<user::GravityForce, user::GravityEPI, user::GravityEPJ,
                                                    grove::MomentQuadrupole, grove::SPJQuadrupole>;
    if (o.quadrupole) run<Quadrupole>(o, user::cuda::GravityQuadrupoleSpInteraction{eps2});
    else run<Monopole>(o, user::cuda::GravityMonopoleSpInteraction{eps2});
  } catch (const std::exception& e) {
    std::printf("{\"bench\":\"resident\",\"n\":%zu,\"error\":\"%s\"}\n", o.n, e.what());
    return 1;
  }
  return 0;
}
