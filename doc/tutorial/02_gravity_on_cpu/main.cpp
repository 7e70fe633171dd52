// Tutorial 02: self-gravity on the CPU with a Barnes-Hut tree. The user writes the particle
// classes and one kernel; grove builds the tree, the local essential trees between ranks and the
// interaction lists, and calls the kernel for each group of particles. The program compares the
// tree's accelerations with direct summation, then integrates a few leapfrog steps and checks
// that the energy holds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <grove/grove.hpp>

// What the kernel accumulates for one body; clear() zeroes it before each calculation.
struct Accel {
  grove::Vec3d acc;
  double pot = 0;
  void clear() { *this = Accel{}; }
};

// The full particle: what a body carries between steps.
struct Body {
  std::int64_t id = 0;
  double mass = 0;
  grove::Vec3d pos, vel, acc;
  double pot = 0;
  grove::Vec3d getPos() const { return pos; }
  void copyFromForce(const Accel& a) { acc = a.acc, pot = a.pot; }
};

// What a body needs as a target (EPI) and as a source (EPJ): kept small, EPJs travel between ranks.
struct Target {
  grove::Vec3d pos;
  grove::Vec3d getPos() const { return pos; }
  void copyFromFP(const Body& b) { pos = b.pos; }
};
struct Source {
  grove::Vec3d pos;
  double mass = 0;
  grove::Vec3d getPos() const { return pos; }
  double getCharge() const { return mass; }
  void copyFromFP(const Body& b) { pos = b.pos, mass = b.mass; }
};

constexpr double kEps2 = 1e-4;  // Plummer softening squared

// One kernel for both kinds of source: particles (Source) and tree cells (grove's superparticles,
// which have the same getPos/getCharge), n_j of them on each of n_i targets.
struct Gravity {
  template <class J>
  void operator()(const Target* targets, int n_i, const J* sources, int n_j, Accel* out) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) {
        const grove::Vec3d d = sources[j].getPos() - targets[i].pos;
        const double r2 = grove::norm2(d) + kEps2, r_inv = 1.0 / std::sqrt(r2);
        const double m = sources[j].getCharge();
        out[i].acc += (m * r_inv * r_inv * r_inv) * d;
        out[i].pot -= m * r_inv;
      }
  }
};

using Tree = grove::TreeForForceLong<Accel, Target, Source>::Monopole;

double energyOf(const grove::ParticleSystem<Body>& bodies) {
  double e = 0;
  for (const Body& b : bodies) e += 0.5 * b.mass * grove::norm2(b.vel) + 0.5 * b.mass * (b.pot + b.mass / std::sqrt(kEps2));
  return bodies.comm().allreduceSum(e);  // the kernel's self term -m/eps taken out
}

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  const int rank = runtime.rank(), ranks = runtime.rankCount();
  const std::int64_t n = 16384;

  // A uniform sphere of radius 1, total mass 1, at rest: rank r makes bodies r, r + P, ...
  grove::ParticleSystem<Body> bodies;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t id = 0; id < n; ++id) {
    grove::Vec3d x;
    do x = {u(rng), u(rng), u(rng)};
    while (grove::norm2(x) > 1.0);
    if (id % ranks == rank) bodies.add({id, 1.0 / n, x, {}, {}, 0});
  }
  grove::DomainInfo domains;
  domains.decomposeDomainAll(bodies);
  bodies.exchangeParticle(domains);

  // theta 0.5, at most 8 bodies per leaf, 64 per interaction list group.
  Tree tree(bodies.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(Gravity{}, Gravity{}, bodies, domains);

  // Against direct summation over all bodies (gathered here only to check), for this rank's first 64.
  const std::vector<Body> all = bodies.comm().allgatherv(bodies.particles());
  std::vector<double> errors;
  for (std::size_t i = 0; i < std::min<std::size_t>(64, bodies.size()); ++i) {
    grove::Vec3d direct;
    for (const Body& b : all) {
      const grove::Vec3d d = b.pos - bodies[i].pos;
      const double r2 = grove::norm2(d) + kEps2;
      direct += (b.mass / (r2 * std::sqrt(r2))) * d;
    }
    errors.push_back(grove::norm(bodies[i].acc - direct) / grove::norm(direct));
  }
  std::vector<double> gathered = bodies.comm().allgatherv(errors);
  std::sort(gathered.begin(), gathered.end());
  const double median = gathered[gathered.size() / 2];
  grove::log("tree vs direct summation, {} bodies: median relative error {:.2e}, largest {:.2e}", gathered.size(),
             median, gathered.back());

  // Kick-drift-kick leapfrog; the domains are cut again every 4 steps.
  const double dt = 1.0 / 256, e0 = energyOf(bodies);
  for (int step = 1; step <= 16; ++step) {
    for (Body& b : bodies) b.vel += (0.5 * dt) * b.acc, b.pos += dt * b.vel;
    if (step % 4 == 0) domains.decomposeDomainAll(bodies);
    bodies.exchangeParticle(domains);
    tree.calcForceAllAndWriteBack(Gravity{}, Gravity{}, bodies, domains);
    for (Body& b : bodies) b.vel += (0.5 * dt) * b.acc;
  }
  const double drift = std::abs((energyOf(bodies) - e0) / e0);
  grove::log("16 steps: relative energy change {:.2e}; last step {}", drift, tree.profile().json());
  return median < 5e-3 && drift < 1e-4 ? 0 : 1;
}
