#pragma once
// What fmm_benchmark (the host) and gpu/fmm_gpu_benchmark (one GPU) share: the particle types, the
// double-precision kernels of both methods, direct summation at sampled particles, the timing and
// the summary of the fastest run of each method per error target (doc/fmm.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "grove/core/execution.hpp"
#include "grove/fmm/cartesian_expansion.hpp"
#include "grove/grove.hpp"
#include "nbody_initial_conditions.hpp"

namespace fmm_comparison {

struct Force {
  grove::Vec3d acc;
  double pot = 0.0;
  GROVE_HOST_DEVICE void clear() { acc = {}, pot = 0.0; }
  // A GPU multiwalk's retrieve adds the device's forces (grove/gpu/multiwalk/multiwalk.hpp).
  GROVE_HOST_DEVICE Force& operator+=(const Force& o) {
    acc.x += o.acc.x, acc.y += o.acc.y, acc.z += o.acc.z, pot += o.pot;
    return *this;
  }
};

struct Star {
  std::int64_t id = 0;
  double mass = 0.0;
  grove::Vec3d pos;
  Force force;
  // GROVE_HOST_DEVICE: fmm_gpu_engine.cu (nvcc) instantiates grove's host-device positionOf with it.
  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }
  void copyFromForce(const Force& f) { force = f; }
};

struct EP {
  grove::Vec3d pos;
  double mass = 0.0;
  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void setPos(const grove::Vec3d& p) { pos = p; }
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  void copyFromFP(const Star& s) { pos = s.pos, mass = s.mass; }
};

// Newtonian gravity in double precision, unsoftened (r = 0, a particle on itself, gives nothing),
// written so the compiler vectorises the inner loop. The near field of both methods.
struct NewtonKernel {
  template <class Source>
  void operator()(const EP* epi, int n_i, const Source* epj, int n_j, Force* f) const {
    for (int i = 0; i < n_i; ++i) {
      const grove::Vec3d xi = epi[i].pos;
      double ax = 0.0, ay = 0.0, az = 0.0, pot = 0.0;
#pragma omp simd reduction(+ : ax, ay, az, pot)
      for (int j = 0; j < n_j; ++j) {
        const grove::Vec3d p = epj[j].getPos();
        const double dx = p.x - xi.x, dy = p.y - xi.y, dz = p.z - xi.z;
        const double r2 = dx * dx + dy * dy + dz * dz;
        const double r_inv = r2 > 0.0 ? 1.0 / std::sqrt(r2) : 0.0;
        const double m_r_inv = epj[j].getCharge() * r_inv, m_r3_inv = m_r_inv * r_inv * r_inv;
        ax += m_r3_inv * dx;
        ay += m_r3_inv * dy;
        az += m_r3_inv * dz;
        pot -= m_r_inv;
      }
      f[i].acc += grove::Vec3d{ax, ay, az};
      f[i].pot += pot;
    }
  }
};

// A superparticle's monopole and quadrupole (raw second moment Q about the centre of mass):
// phi = -m/r - (3 r.Q.r - r^2 tr Q) / (2 r^5).
struct QuadrupoleKernel {
  void operator()(const EP* epi, int n_i, const grove::SPJQuadrupole* sp, int n_j, Force* f) const {
    for (int i = 0; i < n_i; ++i) {
      const grove::Vec3d xi = epi[i].pos;
      double ax = 0.0, ay = 0.0, az = 0.0, pot = 0.0;
#pragma omp simd reduction(+ : ax, ay, az, pot)
      for (int j = 0; j < n_j; ++j) {
        const grove::SymMat3d& q = sp[j].quad;
        const double rx = xi.x - sp[j].pos.x, ry = xi.y - sp[j].pos.y, rz = xi.z - sp[j].pos.z;
        const double r2 = rx * rx + ry * ry + rz * rz, r_inv = 1.0 / std::sqrt(r2);
        const double r3 = r_inv * r_inv * r_inv, r5 = r3 * r_inv * r_inv, r7 = r5 * r_inv * r_inv;
        const double qx = q.xx * rx + q.xy * ry + q.xz * rz, qy = q.xy * rx + q.yy * ry + q.yz * rz,
                     qz = q.xz * rx + q.yz * ry + q.zz * rz;
        const double rqr = rx * qx + ry * qy + rz * qz, tr = q.xx + q.yy + q.zz, m = sp[j].mass;
        pot += -m * r_inv - 1.5 * rqr * r5 + 0.5 * tr * r3;
        const double radial = -m * r3 - 7.5 * rqr * r7 + 1.5 * tr * r5;
        ax += radial * rx + 3.0 * r5 * qx;
        ay += radial * ry + 3.0 * r5 * qy;
        az += radial * rz + 3.0 * r5 * qz;
      }
      f[i].acc += grove::Vec3d{ax, ay, az};
      f[i].pot += pot;
    }
  }
};

struct Errors {
  double median = 0.0, p99 = 0.0, max = 0.0;
};

// Direct summation for the sampled particles (all ranks' particles as sources), then the relative
// acceleration errors over all ranks' samples.
struct Reference {
  std::vector<std::size_t> sampled;  // indices into this rank's particles
  std::vector<grove::Vec3d> acc;

  Reference(const grove::ParticleSystem<Star>& psys, std::int64_t n_check) {
    const grove::Comm& comm = psys.comm();
    const std::vector<Star> all = comm.allgatherv(psys.particles());
    std::vector<EP> sources(all.size());
    for (std::size_t j = 0; j < all.size(); ++j) sources[j].copyFromFP(all[j]);
    // Every rank checks its share of n_check particles, spread over its own.
    const double share = static_cast<double>(n_check) * static_cast<double>(psys.size()) / static_cast<double>(all.size());
    const std::size_t count = std::min(psys.size(), static_cast<std::size_t>(std::ceil(share)));
    for (std::size_t k = 0; k < count; ++k) sampled.push_back(k * psys.size() / count);
    acc.resize(sampled.size());
#pragma omp parallel for schedule(dynamic, 4)
    for (std::size_t k = 0; k < sampled.size(); ++k) {
      EP target;
      target.copyFromFP(psys[sampled[k]]);
      Force f;
      NewtonKernel{}(&target, 1, sources.data(), static_cast<int>(sources.size()), &f);
      acc[k] = f.acc;
    }
  }

  Errors errors(const grove::ParticleSystem<Star>& psys) const {
    std::vector<double> local(sampled.size());
    for (std::size_t k = 0; k < sampled.size(); ++k)
      local[k] = grove::norm(psys[sampled[k]].force.acc - acc[k]) / grove::norm(acc[k]);
    std::vector<double> all = psys.comm().allgatherv(local);
    std::sort(all.begin(), all.end());
    if (all.empty()) return {};
    auto at = [&](double q) { return all[static_cast<std::size_t>(q * static_cast<double>(all.size() - 1))]; };
    return {at(0.5), at(0.99), all.back()};
  }
};

struct Run {
  std::string method;
  double theta = 0.0;
  int order = 0;
  double seconds = 0.0;
  Errors errors;
};

template <class Compute>
double bestSeconds(const grove::Comm& comm, int warmup, int repeat, Compute&& compute) {
  for (int w = 0; w < warmup; ++w) compute();  // untimed: first-touch of the buffers
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeat; ++r) {
    comm.barrier();
    const double start = grove::wallSeconds();
    compute();
    best = std::min(best, comm.allreduceMax(grove::wallSeconds() - start));
  }
  return best;
}


// The settings both programs take.
struct Options {
  std::int64_t n = 1 << 18, n_check = 2000;
  std::vector<int> orders{4, 6, 8};
  std::vector<double> thetas{0.4, 0.5, 0.6}, tree_thetas{0.2, 0.3, 0.4, 0.5};
  std::vector<double> targets{1e-4, 1e-6};
  int n_leaf = 32, tree_leaf = 16, tree_group = 256, repeat = 3, warmup = 1;
  bool no_tree = false;

  void addTo(CLI::App& app) {
    app.add_option("-n,--particles", n, "particles in all")->check(CLI::PositiveNumber);
    app.add_option("--orders", orders, "FMM expansion orders")->check(CLI::Range(1, grove::fmm::kMaxOrder));
    app.add_option("--thetas", thetas, "FMM opening angles")->check(CLI::Range(0.01, 0.99));
    app.add_option("--fmm-leaf", n_leaf, "FMM particles per leaf")->check(CLI::PositiveNumber);
    app.add_option("--tree-thetas", tree_thetas, "tree opening angles")->check(CLI::Range(0.0, 1.5));
    app.add_flag("--no-tree", no_tree, "FMM runs only");
    app.add_option("--tree-leaf", tree_leaf, "tree n_leaf_limit")->check(CLI::PositiveNumber);
    app.add_option("--tree-group", tree_group, "tree n_group_limit")->check(CLI::PositiveNumber);
    app.add_option("--check", n_check, "particles checked against direct summation")->check(CLI::PositiveNumber);
    app.add_option("--warmup", warmup, "untimed calls before the timed ones")->check(CLI::NonNegativeNumber);
    app.add_option("--repeat", repeat, "timed calls per run (the best is reported)")->check(CLI::PositiveNumber);
    app.add_option("--targets", targets, "median error targets of the summary");
  }
};

// Parses the command line; the exit code when the run stops here (--help, or a bad option: rank 0
// prints it).
inline std::optional<int> parseCommandLine(CLI::App& app, int argc, char** argv, const grove::Runtime& runtime) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return runtime.rank() == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 1);
  }
  return std::nullopt;
}

// The Plummer sphere of n bodies (samples/nbody's, seed 2026), spread over the ranks and
// decomposed.
inline void makePlummerSphere(grove::ParticleSystem<Star>& psys, grove::DomainInfo& dinfo, std::int64_t n) {
  const grove::Comm& comm = psys.comm();
  const std::int64_t first = n * comm.rank() / comm.size(), last = n * (comm.rank() + 1) / comm.size();
  for (const Star& star : nbody::makeInParallel<Star>(first, last, [n](std::int64_t id) {
         const nbody::Body b = nbody::plummerSphere(id, n, 2026);
         return Star{b.id, b.mass, b.pos, {}};
       }))
    psys.add(star);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

// n bodies of mass 1 / n uniform in the unit cube (seed 2026), spread over the ranks and
// decomposed in a periodic unit box (dinfo: PERIODIC_XYZ, root domain [0, 1)^3).
inline void makeUniformBox(grove::ParticleSystem<Star>& psys, grove::DomainInfo& dinfo, std::int64_t n) {
  const grove::Comm& comm = psys.comm();
  dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain(grove::Vec3d(0.0, 0.0, 0.0), grove::Vec3d(1.0, 1.0, 1.0));
  const std::int64_t first = n * comm.rank() / comm.size(), last = n * (comm.rank() + 1) / comm.size();
  for (const Star& star : nbody::makeInParallel<Star>(first, last, [n](std::int64_t id) {
         std::mt19937_64 rng(2026 * 1000003 + static_cast<std::uint64_t>(id));
         std::uniform_real_distribution<double> u(0.0, 1.0);
         return Star{id, 1.0 / static_cast<double>(n), grove::Vec3d(u(rng), u(rng), u(rng)), {}};
       }))
    psys.add(star);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

// Each run's errors against the reference, one JSON line per run (`machine`: more fields for the
// line, e.g. R"("gpu":"H100",)"), and the runs kept for the summaries.
class Report {
 public:
  Report(const grove::Runtime& runtime, const Reference& reference, const grove::ParticleSystem<Star>& psys,
         std::int64_t n, std::string machine = "")
      : runtime_(runtime), reference_(reference), psys_(psys), n_(n), machine_(std::move(machine)) {}
  void operator()(Run run, const std::string& details) {
    run.errors = reference_.errors(psys_);
    grove::log(R"({{"method":"{}","n":{},"ranks":{},"threads":{},{}"theta":{},"order":{},"seconds":{:.5g},)"
               R"("median_error":{:.3e},"p99_error":{:.3e},"max_error":{:.3e},"details":{}}})",
               run.method, n_, runtime_.rankCount(), runtime_.threadCount(), machine_, run.theta, run.order, run.seconds,
               run.errors.median, run.errors.p99, run.errors.max, details);
    runs_.push_back(run);
  }
  // A periodic run's line beside its open one on the same bodies (no error: the reference is the
  // open box's direct sum): its seconds, the open run's and their ratio.
  void periodic(const std::string& method, double theta, int order, double seconds, double open_seconds,
                const std::string& details) const {
    grove::log(R"({{"method":"{}_periodic","n":{},"ranks":{},"threads":{},{}"theta":{},"order":{},"seconds":{:.5g},)"
               R"("open_seconds":{:.5g},"periodic_over_open":{:.3f},"details":{}}})",
               method, n_, runtime_.rankCount(), runtime_.threadCount(), machine_, theta, order, seconds, open_seconds,
               seconds / open_seconds, details);
  }
  const std::vector<Run>& runs() const { return runs_; }

 private:
  const grove::Runtime& runtime_;
  const Reference& reference_;
  const grove::ParticleSystem<Star>& psys_;
  std::int64_t n_;
  std::string machine_;
  std::vector<Run> runs_;
};

// For each error target, the fastest run of `fmm` and of `tree` that reaches it (median relative
// acceleration error), and their ratio: one JSON line each.
inline void logSummaries(const std::vector<Run>& runs, const std::vector<double>& targets, const std::string& fmm,
                         const std::string& tree, std::int64_t n, int threads) {
  for (double target : targets) {
    auto fastest = [&](const std::string& method) {
      const Run* best = nullptr;
      for (const Run& r : runs)
        if (r.method == method && r.errors.median <= target && (!best || r.seconds < best->seconds)) best = &r;
      return best;
    };
    const Run* f = fastest(fmm);
    const Run* t = fastest(tree);
    auto describe = [](const Run* r) {
      return r ? fmt::format(R"({{"seconds":{:.5g},"theta":{},"order":{},"median_error":{:.3e}}})", r->seconds, r->theta,
                             r->order, r->errors.median)
               : std::string("null");
    };
    grove::log(R"({{"summary":{{"target_median_error":{:.1e},"n":{},"threads":{},"fmm_method":"{}","fmm":{},)"
               R"("tree_method":"{}","tree":{},"tree_over_fmm":{}}}}})",
               target, n, threads, fmm, describe(f), tree, describe(t),
               f && t ? fmt::format("{:.3f}", t->seconds / f->seconds) : std::string("null"));
  }
}

}  // namespace fmm_comparison
