// A GPU-resident program that uses an installed grove through its one resident header and
// grove::gpu only: decompose and exchange from device memory, one tree force with lists kept,
// two reuse steps, and checks
//   - the accelerations against direct summation on the host with the same interaction functor
//     (GROVE_HOST_DEVICE: one body of code for the device walk and the host reference);
//   - the self-pair rule of doc/gpu_resident.md: every body meets its own EPJ exactly once in
//     the particle interaction (counted, not assumed);
//   - that no body was lost or duplicated by the exchange.
// Prints the grove version it was built against; without a CUDA device it says so and exits
// with 77 (ctest's "skipped"). Exits 1 when a check fails.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include <grove/gpu/resident.cuh>

namespace {

constexpr float kEps2 = 1e-4f;
constexpr std::int64_t kBodies = 8192;

struct Accel {
  float ax = 0, ay = 0, az = 0, pot = 0;
  int zero_distance_pairs = 0;  // pairs at distance exactly 0: the body with itself
};
struct Body {
  std::int64_t id = 0;
  double mass = 0;
  grove::Vec3d pos, acc;
  int zero_distance_pairs = 0;
  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void copyFromForce(const Accel& a) {
    acc = {a.ax, a.ay, a.az};
    zero_distance_pairs = a.zero_distance_pairs;
  }
};
struct Target {
  grove::Vec3f pos;
  GROVE_HOST_DEVICE grove::Vec3f getPos() const { return pos; }
  GROVE_HOST_DEVICE void copyFromFP(const Body& b) { pos = grove::Vec3f(b.pos); }
};
struct Source {
  grove::Vec3f pos;
  float mass = 0;
  GROVE_HOST_DEVICE grove::Vec3f getPos() const { return pos; }
  GROVE_HOST_DEVICE float getCharge() const { return mass; }
  GROVE_HOST_DEVICE void copyFromFP(const Body& b) {
    pos = grove::Vec3f(b.pos);
    mass = static_cast<float>(b.mass);
  }
};

// 1/sqrt: the device's intrinsic where nvcc compiles for the device, the standard one on the
// host. __frsqrt_rn is device-only, so a GROVE_HOST_DEVICE function must branch on __CUDA_ARCH__
// (doc/gpu_resident.md).
GROVE_HOST_DEVICE inline float inverseSqrt(float x) {
#ifdef __CUDA_ARCH__
  return __frsqrt_rn(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

GROVE_HOST_DEVICE inline void pull(const Target& i, float x, float y, float z, float m, Accel& a) {
  const float dx = x - i.pos.x, dy = y - i.pos.y, dz = z - i.pos.z;
  const float r2 = dx * dx + dy * dy + dz * dz;
  const float r_inv = inverseSqrt(kEps2 + r2), mr3 = m * r_inv * r_inv * r_inv;
  a.ax += mr3 * dx, a.ay += mr3 * dy, a.az += mr3 * dz, a.pot -= m * r_inv;
}
struct FromParticle {
  GROVE_HOST_DEVICE void operator()(const Target& i, const Source& j, Accel& a) const {
    if (j.pos.x == i.pos.x && j.pos.y == i.pos.y && j.pos.z == i.pos.z) ++a.zero_distance_pairs;
    pull(i, j.pos.x, j.pos.y, j.pos.z, j.mass, a);
  }
};
struct FromCell {
  GROVE_HOST_DEVICE void operator()(const Target& i, const grove::gpu::DeviceMonopole& s, Accel& a) const {
    pull(i, s.x, s.y, s.z, s.mass, a);
  }
};
struct Sum {
  GROVE_HOST_DEVICE std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
};
struct IdOf {
  GROVE_HOST_DEVICE std::int64_t operator()(const Body& b) const { return b.id; }
};

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  grove::log("grove_consumer_gpu: built against grove {}", GROVE_VERSION);
  if (grove::gpu::deviceCount() == 0) {
    grove::log("grove_consumer_gpu: no CUDA device here: skipped");
    return 77;
  }
  grove::gpu::selectDeviceForRank(runtime.rank());
  const int rank = runtime.rank(), ranks = runtime.rankCount();
  const grove::Comm comm = grove::Comm::world();

  std::vector<Body> mine;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t id = 0; id < kBodies; ++id) {
    grove::Vec3d x{u(rng), u(rng), u(rng)};
    if (id % ranks == rank) mine.push_back({id, 1.0 / kBodies, x, {}, 0});
  }
  grove::gpu::DeviceParticleSystem<Body> bodies;
  bodies.upload(mine);
  grove::DomainInfo domains;
  grove::gpu::ExchangeScratch exchange_scratch;  // kept between exchanges, as a time loop would
  grove::gpu::decomposeDomainAll(domains, bodies);
  grove::gpu::exchangeParticles(bodies, domains, exchange_scratch);

  grove::gpu::ResidentTreeLong<Accel, Target, Source> tree(0.5, 16, 128, bodies.policy());
  tree.calcForceAllAndWriteBack(bodies, FromParticle{}, FromCell{}, domains, grove::MAKE_LIST_FOR_REUSE);
  tree.calcForceAllAndWriteBack(bodies, FromParticle{}, FromCell{}, domains, grove::REUSE_LIST);

  const std::int64_t count = comm.allreduceSum(static_cast<std::int64_t>(bodies.size()));
  const std::int64_t id_sum = comm.allreduceSum(grove::gpu::transformReduce(bodies.policy(), bodies,
                                                                            std::int64_t{0}, Sum{}, IdOf{}));

  const std::vector<Body> here = bodies.download();
  const std::vector<Body> all = comm.allgatherv(std::span<const Body>(here));
  std::int64_t wrong_self_pairs = 0;
  for (const Body& b : here) wrong_self_pairs += b.zero_distance_pairs != 1;
  wrong_self_pairs = comm.allreduceSum(wrong_self_pairs);

  std::vector<double> errors;  // the host reference: the same functor over every pair
  for (std::size_t k = 0; k < std::min<std::size_t>(32, here.size()); ++k) {
    Target i;
    i.copyFromFP(here[k]);
    Accel direct;
    for (const Body& b : all) {
      Source j;
      j.copyFromFP(b);
      FromParticle{}(i, j, direct);
    }
    const grove::Vec3d reference{direct.ax, direct.ay, direct.az};
    errors.push_back(grove::norm(here[k].acc - reference) / grove::norm(reference));
  }
  std::vector<double> gathered = comm.allgatherv(std::span<const double>(errors));
  std::sort(gathered.begin(), gathered.end());
  const double median = gathered[gathered.size() / 2];

  grove::log("grove_consumer_gpu: {} ranks, {} bodies (expected {}), id sum {} (expected {}), "
             "{} bodies without exactly one self pair, median relative error {:.2e} over {} bodies",
             ranks, count, kBodies, id_sum, kBodies * (kBodies - 1) / 2, wrong_self_pairs, median, gathered.size());
  const bool ok = count == kBodies && id_sum == kBodies * (kBodies - 1) / 2 && wrong_self_pairs == 0 && median < 5e-3;
  if (!ok) std::fprintf(stderr, "grove_consumer_gpu: FAILED on rank %d\n", rank);
  return ok ? 0 : 1;
}
