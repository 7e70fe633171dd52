// Tutorial 03: a short-range interaction, the SPH density of a gas in a periodic box. The kernel
// sees, for each group of particles, every particle that may lie within a target's search radius
// (a superset: it tests the distance itself); across the periodic faces grove hands over the
// nearest image of each neighbour. The program checks the densities against a brute-force sum.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <grove/grove.hpp>

struct Density {
  double rho = 0;
  int neighbours = 0;
  void clear() { *this = Density{}; }
};

struct Gas {
  std::int64_t id = 0;
  double mass = 0, h = 0;  // h: the smoothing kernel's support radius
  grove::Vec3d pos;
  double rho = 0;
  int neighbours = 0;
  grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }  // periodic boxes: grove wraps positions
  void copyFromForce(const Density& d) { rho = d.rho, neighbours = d.neighbours; }
};

// A gather search: a target's neighbours are the particles within its own radius (getRSearch).
struct Target {
  grove::Vec3d pos;
  double h = 0;
  grove::Vec3d getPos() const { return pos; }
  double getRSearch() const { return h; }
  void copyFromFP(const Gas& g) { pos = g.pos, h = g.h; }
};
struct Neighbour {
  grove::Vec3d pos;
  double mass = 0;
  grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }  // grove moves periodic images
  void copyFromFP(const Gas& g) { pos = g.pos, mass = g.mass; }
};

// The cubic spline (M4) of support radius h, normalised in 3-D.
double kernelW(double r, double h) {
  const double q = 2.0 * r / h, sigma = 8.0 / (M_PI * h * h * h);
  if (q >= 2.0) return 0.0;
  if (q >= 1.0) return sigma * 0.25 * std::pow(2.0 - q, 3);
  return sigma * (1.0 - 1.5 * q * q + 0.75 * q * q * q);
}

struct DensityKernel {
  void operator()(const Target* targets, int n_i, const Neighbour* js, int n_j, Density* out) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) {
        const double r = grove::norm(js[j].pos - targets[i].pos);
        if (r >= targets[i].h) continue;  // the candidates are a superset of the neighbours
        out[i].rho += js[j].mass * kernelW(r, targets[i].h);
        out[i].neighbours += 1;
      }
  }
};

using DensityTree = grove::TreeForForceShort<Density, Target, Neighbour>::Gather;

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  const int rank = runtime.rank(), ranks = runtime.rankCount();

  // A jittered lattice of 24^3 particles of total mass 1 in the periodic unit box.
  const int side = 24;
  const double dx = 1.0 / side;
  grove::ParticleSystem<Gas> gas;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> jitter(-0.2 * dx, 0.2 * dx);
  for (std::int64_t id = 0; id < std::int64_t{side} * side * side; ++id) {
    const grove::Vec3d cell{double(id % side), double(id / side % side), double(id / side / side)};
    const grove::Vec3d x = (cell + grove::Vec3d(0.5)) * dx + grove::Vec3d(jitter(rng), jitter(rng), jitter(rng));
    if (id % ranks == rank) gas.add({id, 1.0 / (side * side * side), 2.6 * dx, x, 0, 0});
  }
  grove::DomainInfo domains;
  domains.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  domains.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  domains.decomposeDomainAll(gas);
  gas.exchangeParticle(domains);

  DensityTree tree(gas.size());
  tree.calcForceAllAndWriteBack(DensityKernel{}, gas, domains);

  // Brute force for this rank's particles: every particle of every rank, at its nearest image.
  const std::vector<Gas> all = gas.comm().allgatherv(gas.particles());
  double worst = 0, mean_rho = 0;
  int missing = 0;
  for (const Gas& g : gas) {
    double rho = 0;
    int count = 0;
    for (const Gas& o : all) {
      grove::Vec3d d = o.pos - g.pos;
      for (double* c : {&d.x, &d.y, &d.z}) *c -= std::round(*c);  // nearest image in the unit box
      const double r = grove::norm(d);
      if (r < g.h) rho += o.mass * kernelW(r, g.h), ++count;
    }
    worst = std::max(worst, std::abs(g.rho - rho) / rho);
    missing += count != g.neighbours;
    mean_rho += g.rho;
  }
  worst = gas.comm().allreduceMax(worst);
  missing = gas.comm().allreduceSum(missing);
  mean_rho = gas.comm().allreduceSum(mean_rho) / static_cast<double>(all.size());
  grove::log("{} particles, mean density {:.4f} (the box holds mass 1), {} with a neighbour count unlike brute "
             "force, largest density difference {:.1e}", all.size(), mean_rho, missing, worst);
  return missing == 0 && worst < 1e-12 && std::abs(mean_rho - 1.0) < 0.02 ? 0 : 1;
}
