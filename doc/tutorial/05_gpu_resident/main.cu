// Tutorial 05: the GPU-resident pipeline. The bodies live in device memory from start to end;
// the tree is built, walked and evaluated on the device with the user's own pairwise
// interactions (device functors), and the integrator and the energies are functors run over the
// particles by grove::gpu::forEach and transformReduce. On several ranks, one GPU each, the
// decomposition and the particle exchange work from device data too. The program checks the
// forces against direct summation and the energy over 16 steps; without a device it says so
// and exits with 77 (ctest's "skipped").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "grove/gpu/resident.cuh"  // the whole resident API, as grove/grove.hpp is for the host

// The same contracts as tutorial 02, with GROVE_HOST_DEVICE on what the device calls.
struct Accel {
  float ax = 0, ay = 0, az = 0, pot = 0;  // value-initialised = cleared
};
struct Body {
  std::int64_t id = 0;
  double mass = 0;
  grove::Vec3d pos, vel, acc;
  double pot = 0;
  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void copyFromForce(const Accel& a) { acc = {a.ax, a.ay, a.az}, pot = a.pot; }
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
  GROVE_HOST_DEVICE void copyFromFP(const Body& b) { pos = grove::Vec3f(b.pos), mass = static_cast<float>(b.mass); }
};

constexpr float kEps2 = 1e-4f;

// The interactions: one source particle, one tree cell (grove's device image of a monopole).
__device__ inline void pull(const Target& i, float x, float y, float z, float m, Accel& a) {
  const float dx = x - i.pos.x, dy = y - i.pos.y, dz = z - i.pos.z;
  const float r2 = kEps2 + dx * dx + dy * dy + dz * dz, r_inv = rsqrtf(r2), mr3 = m * r_inv * r_inv * r_inv;
  a.ax += mr3 * dx, a.ay += mr3 * dy, a.az += mr3 * dz, a.pot -= m * r_inv;
}
struct FromParticle {
  __device__ void operator()(const Target& i, const Source& j, Accel& a) const { pull(i, j.pos.x, j.pos.y, j.pos.z, j.mass, a); }
};
struct FromCell {
  __device__ void operator()(const Target& i, const grove::gpu::DeviceMonopole& s, Accel& a) const {
    pull(i, s.x, s.y, s.z, s.mass, a);
  }
};

// The integrator and the energy, one body at a time on the device.
struct Kick {
  double dt;
  GROVE_HOST_DEVICE void operator()(Body& b) const { b.vel += dt * b.acc; }
};
struct Drift {
  double dt;
  GROVE_HOST_DEVICE void operator()(Body& b) const { b.pos += dt * b.vel; }
};
struct EnergyOf {  // kinetic + potential, the kernel's softened self term -m/eps taken out
  GROVE_HOST_DEVICE double operator()(const Body& b) const {
    return 0.5 * b.mass * (b.vel.x * b.vel.x + b.vel.y * b.vel.y + b.vel.z * b.vel.z) +
           0.5 * b.mass * (b.pot + b.mass / ::sqrt(static_cast<double>(kEps2)));
  }
};
struct Sum {
  GROVE_HOST_DEVICE double operator()(double a, double b) const { return a + b; }
};

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  if (grove::gpu::deviceCount() == 0) {
    grove::log("tutorial 05: no CUDA device here: skipped");
    return 77;
  }
  grove::gpu::selectDeviceForRank(runtime.rank());  // one GPU per rank, round robin
  const int rank = runtime.rank(), ranks = runtime.rankCount();
  const grove::Comm comm = grove::Comm::world();

  // The uniform sphere of tutorial 02, made on the host once and uploaded.
  const std::int64_t n = 65536;
  std::vector<Body> mine;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t id = 0; id < n; ++id) {
    grove::Vec3d x;
    do x = {u(rng), u(rng), u(rng)};
    while (grove::norm2(x) > 1.0);
    if (id % ranks == rank) mine.push_back({id, 1.0 / n, x, {}, {}, 0});
  }
  grove::gpu::DeviceParticleSystem<Body> bodies;
  bodies.upload(mine);
  grove::DomainInfo domains;
  grove::gpu::decomposeDomainAll(domains, bodies);  // samples drawn on the device
  grove::gpu::exchangeParticles(bodies, domains);   // particles moved from device memory

  // theta 0.5, leaf 16, group 256. MAKE_LIST_FOR_REUSE keeps the interaction lists on the
  // device; REUSE_LIST steps evaluate them again with the moved bodies (no build).
  grove::gpu::ResidentTreeLong<Accel, Target, Source> tree(0.5, 16, 256, bodies.policy());
  tree.calcForceAllAndWriteBack(bodies, FromParticle{}, FromCell{}, domains, grove::MAKE_LIST_FOR_REUSE);

  // Against direct summation in double on the host (all bodies gathered, only to check).
  const std::vector<Body> here = bodies.download();
  const std::vector<Body> all = comm.allgatherv(std::span<const Body>(here));
  std::vector<double> errors;
  for (std::size_t i = 0; i < std::min<std::size_t>(64, here.size()); ++i) {
    grove::Vec3d direct;
    for (const Body& b : all) {
      const grove::Vec3d d = b.pos - here[i].pos;
      const double r2 = grove::norm2(d) + kEps2;
      direct += (b.mass / (r2 * std::sqrt(r2))) * d;
    }
    errors.push_back(grove::norm(here[i].acc - direct) / grove::norm(direct));
  }
  std::vector<double> gathered = comm.allgatherv(std::span<const double>(errors));
  std::sort(gathered.begin(), gathered.end());
  const double median = gathered[gathered.size() / 2];
  grove::log("resident tree vs direct summation, {} bodies: median relative error {:.2e}", gathered.size(), median);

  // Kick-drift-kick; lists rebuilt (and bodies redistributed) every 4 steps, reused between.
  const double dt = 1.0 / 256;
  const auto energy = [&] { return comm.allreduceSum(grove::gpu::transformReduce(bodies.policy(), bodies, 0.0, Sum{}, EnergyOf{})); };
  const double e0 = energy();
  for (int step = 1; step <= 16; ++step) {
    grove::gpu::forEach(bodies.policy(), bodies, Kick{0.5 * dt});
    grove::gpu::forEach(bodies.policy(), bodies, Drift{dt});
    const bool rebuild = step % 4 == 0;
    if (rebuild) {
      grove::gpu::decomposeDomainAll(domains, bodies);
      grove::gpu::exchangeParticles(bodies, domains);
    }
    tree.calcForceAllAndWriteBack(bodies, FromParticle{}, FromCell{}, domains,
                                  rebuild ? grove::MAKE_LIST_FOR_REUSE : grove::REUSE_LIST);
    grove::gpu::forEach(bodies.policy(), bodies, Kick{0.5 * dt});
  }
  const double drift = std::abs((energy() - e0) / e0);
  grove::log("16 steps on the device: relative energy change {:.2e}; last step {:.2f} ms of device time", drift,
             1e3 * tree.profile().total);
  return median < 5e-3 && drift < 1e-4 ? 0 : 1;
}
