// samples/treepm: a TreePM N-body program written against the FDPS API, as an FDPS user writes
// one: PS::PM::ParticleMesh for the long-range part of periodic gravity, a cutoff tree
// (PS::TreeForForceLong<...>::MonopoleWithCutoff) for the short-range remainder, leapfrog in
// comoving coordinates of an Einstein-de Sitter universe.
//
// The run is the Zel'dovich pancake: a lattice of particles displaced by one plane wave along x,
//   x(q, a) = q + a (B / k) sin(k q_x) e_x,   B = 1 / a_cross,  k = 2 pi / L,
// which is the exact solution of the planar problem until shell crossing at a = a_cross (the
// pancake forms at x = L / 2). The program integrates from a_start to a_end < a_cross and prints,
// as one JSON line, the L1 and max errors of the displacement and of the momentum against it,
// relative to the analytic amplitude; it exits non-zero when an error exceeds its bound.
//
// Units: G = 1, box L = 1, total mass 1 (comoving mean density 1), so H0^2 = 8 pi / 3.
// Comoving position x, momentum p = a^2 dx/dt; with the expansion factor a as time variable,
//   dx/da = p / (H0 a^{3/2}),   dp/da = g(x) / (H0 a^{1/2}),
// g the peculiar acceleration of the comoving masses (PM + PP, with the mean density removed).
//
// --gravity fmm (a Grove extension; FDPS has no FMM): the whole periodic force from
// grove::FmmForce instead, with the near field's kernel below and its far field summed over the
// lattice as the Ewald sum does (the mean density removed as the mesh removes it; doc/fmm.md,
// "Periodic boxes"). No mesh, so no mesh-scale force error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include <grove/fmm/fmm_force.hpp>
#include <particle_simulator.hpp>

namespace {

// ---- user particle classes (FDPS's FP / EPI / EPJ / Force) -------------------------------------

class ForcePP {
 public:
  PS::F64vec acc;
  void clear() { acc = 0.0; }
};

class FPTreePM {
 public:
  PS::S64 id;
  PS::F64 mass;
  PS::F64vec pos;   // comoving
  PS::F64vec mom;   // p = a^2 dx/dt
  PS::F64vec q;     // Lagrangian (unperturbed lattice) position
  PS::F64vec acc_pp;
  PS::F64vec acc_pm;

  PS::F64vec getPos() const { return pos; }
  void setPos(const PS::F64vec& p) { pos = p; }
  void copyFromForce(const ForcePP& f) { acc_pp = f.acc; }
  PS::F64 getChargeParticleMesh() const { return mass; }
  void copyFromForceParticleMesh(const PS::F32vec& a) { acc_pm = a; }
};

class EPTreePM {
 public:
  PS::S64 id;
  PS::F64 mass;
  PS::F64vec pos;
  static inline PS::F64 r_cut = 0.0;  // the PM split radius, CUTOFF_RADIUS mesh cells
  static inline PS::F64 eps2 = 0.0;   // Plummer softening squared of the PP part

  PS::F64vec getPos() const { return pos; }
  void setPos(const PS::F64vec& p) { pos = p; }
  PS::F64 getCharge() const { return mass; }
  PS::F64 getRSearch() const { return r_cut; }  // the cutoff tree's reach
  void copyFromFP(const FPTreePM& fp) {
    id = fp.id;
    mass = fp.mass;
    pos = fp.pos;
  }
};

// The short-range part: -m_j g_f(r) (x_i - x_j) / r^3, g_f = S2's cutoffForceFactor, zero from
// r_cut on. The tree hands over periodic images already moved, so plain differences suffice.
// With softening, r is the softened distance inside r_cut (as FDPS's TreePM sample).
template <class TPJ>
struct CalcPPForce {
  void operator()(const EPTreePM* epi, PS::S32 n_i, const TPJ* epj, PS::S32 n_j, ForcePP* force) const {
    const PS::F64 r_cut = EPTreePM::r_cut, eps2 = EPTreePM::eps2;
    for (PS::S32 i = 0; i < n_i; ++i) {
      PS::F64vec acc = 0.0;
      for (PS::S32 j = 0; j < n_j; ++j) {
        const PS::F64vec dr = epi[i].getPos() - epj[j].getPos();
        const PS::F64 r2 = dr * dr;
        if (r2 == 0.0 || r2 >= r_cut * r_cut) continue;  // itself, or beyond the cutoff
        const PS::F64 r = std::sqrt(r2 + eps2);
        acc -= dr * (epj[j].getCharge() * PS::PM::cutoffForceFactor(r, r_cut) / (r * r * r));
      }
      force[i].acc += acc;
    }
  }
};

// The FMM's near field: plain Newtonian gravity, -m_j (x_i - x_j) / r^3 (r softened by eps;
// the particle itself, r = 0, skipped). The FMM hands over periodic images already moved.
struct CalcNewtonForce {
  void operator()(const EPTreePM* epi, PS::S32 n_i, const EPTreePM* epj, PS::S32 n_j, ForcePP* force) const {
    const PS::F64 eps2 = EPTreePM::eps2;
    for (PS::S32 i = 0; i < n_i; ++i) {
      PS::F64vec acc = 0.0;
      for (PS::S32 j = 0; j < n_j; ++j) {
        const PS::F64vec dr = epi[i].getPos() - epj[j].getPos();
        const PS::F64 r2 = dr * dr;
        if (r2 == 0.0) continue;
        const PS::F64 r_inv = 1.0 / std::sqrt(r2 + eps2);
        acc -= dr * (epj[j].getCharge() * r_inv * r_inv * r_inv);
      }
      force[i].acc += acc;
    }
  }
};

// The FMM's far field: the gradient of sum m / r is the acceleration (G = 1).
struct FarFieldAcceleration {
  void operator()(ForcePP& f, const EPTreePM&, double, const grove::Vec3d& grad_phi) const { f.acc += grad_phi; }
};

// ---- the Einstein-de Sitter background (a as time variable) -------------------------------------

const PS::F64 kH0 = std::sqrt(8.0 * std::numbers::pi / 3.0);  // H0^2 = 8 pi G rho / 3, rho = 1

// x += p * driftFactor(a0, a1);  p += g * kickFactor(a0, a1): exact integrals of 1/(H0 a^{3/2})
// and 1/(H0 a^{1/2}) over [a0, a1] (GADGET's drift and kick factors for this universe).
PS::F64 driftFactor(PS::F64 a0, PS::F64 a1) { return 2.0 / kH0 * (1.0 / std::sqrt(a0) - 1.0 / std::sqrt(a1)); }
PS::F64 kickFactor(PS::F64 a0, PS::F64 a1) { return 2.0 / kH0 * (std::sqrt(a1) - std::sqrt(a0)); }

// ---- the Zel'dovich pancake ---------------------------------------------------------------------

struct Options {
  PS::S32 n_side = 16;     // particles per axis
  PS::S32 mesh = 32;       // PM mesh points per axis
  PS::F64 theta = 0.5;
  PS::S32 n_leaf = 8;
  PS::S32 n_group = 64;
  PS::F64 eps = 0.0;       // PP softening (box units)
  PS::F64 a_start = 0.1;
  PS::F64 a_end = 0.8;
  PS::F64 a_cross = 1.0;   // shell crossing
  PS::S32 steps = 64;      // uniform in ln a
  bool fmm = false;        // --gravity fmm: grove::FmmForce instead of PM + cutoff tree
  PS::S32 fmm_order = 6;
  PS::F64 max_l1 = 0.0;    // bounds on the relative displacement errors (set below if not given)
  PS::F64 max_max = 0.0;
};

struct Zeldovich {
  PS::F64 amplitude;  // B = 1 / a_cross
  PS::F64 k = 2.0 * std::numbers::pi;
  // Displacement and momentum of Lagrangian point q at expansion factor a (only along x).
  PS::F64vec displacement(const PS::F64vec& q, PS::F64 a) const {
    return PS::F64vec(a * amplitude / k * std::sin(k * q.x), 0.0, 0.0);
  }
  PS::F64vec momentum(const PS::F64vec& q, PS::F64 a) const {
    return displacement(q, 1.0) * (kH0 * a * std::sqrt(a));  // a^2 dx/dt = H0 a^{3/2} dx/da
  }
};

void makeInitialConditions(PS::ParticleSystem<FPTreePM>& psys, const Options& opt, const Zeldovich& zel) {
  const PS::S64 n = static_cast<PS::S64>(opt.n_side) * opt.n_side * opt.n_side;
  const PS::S64 rank = PS::Comm::getRank(), ranks = PS::Comm::getNumberOfProc();
  const PS::S64 begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  psys.setNumberOfParticleLocal(static_cast<PS::S32>(end - begin));
  const PS::F64 h = 1.0 / opt.n_side;
  for (PS::S64 id = begin; id < end; ++id) {
    FPTreePM& p = psys[static_cast<PS::S32>(id - begin)];
    const PS::S64 ix = id / (opt.n_side * opt.n_side), iy = (id / opt.n_side) % opt.n_side, iz = id % opt.n_side;
    p.id = id;
    p.mass = 1.0 / static_cast<PS::F64>(n);
    p.q = PS::F64vec((ix + 0.5) * h, (iy + 0.5) * h, (iz + 0.5) * h);
    p.pos = p.q + zel.displacement(p.q, opt.a_start);
    p.mom = zel.momentum(p.q, opt.a_start);
    p.acc_pp = p.acc_pm = 0.0;
  }
}

PS::F64 nearestImage(PS::F64 d) { return d - std::round(d); }

struct Errors {
  PS::F64 disp_l1, disp_max, mom_l1, mom_max, transverse_max;
};

// Errors against the analytic solution at a, relative to the largest analytic displacement
// (momentum) amplitude.
Errors compare(const PS::ParticleSystem<FPTreePM>& psys, const Zeldovich& zel, PS::F64 a) {
  const PS::F64 disp_scale = a * zel.amplitude / zel.k;
  const PS::F64 mom_scale = zel.momentum(PS::F64vec(0.25, 0.0, 0.0), a).x;
  PS::F64 disp_sum = 0.0, disp_max = 0.0, mom_sum = 0.0, mom_max = 0.0, transverse = 0.0;
  const PS::S32 n_loc = psys.getNumberOfParticleLocal();
  for (PS::S32 i = 0; i < n_loc; ++i) {
    const FPTreePM& p = psys[i];
    const PS::F64vec d = p.pos - p.q;
    const PS::F64vec disp(nearestImage(d.x), nearestImage(d.y), nearestImage(d.z));
    const PS::F64vec de = disp - zel.displacement(p.q, a);
    const PS::F64vec dp = p.mom - zel.momentum(p.q, a);
    const PS::F64 e_disp = std::sqrt(de * de), e_mom = std::sqrt(dp * dp);
    disp_sum += e_disp;
    disp_max = std::max(disp_max, e_disp);
    mom_sum += e_mom;
    mom_max = std::max(mom_max, e_mom);
    transverse = std::max(transverse, std::sqrt(de.y * de.y + de.z * de.z));
  }
  const PS::F64 n = static_cast<PS::F64>(psys.getNumberOfParticleGlobal());
  return {PS::Comm::getSum(disp_sum) / n / disp_scale, PS::Comm::getMaxValue(disp_max) / disp_scale,
          PS::Comm::getSum(mom_sum) / n / mom_scale, PS::Comm::getMaxValue(mom_max) / mom_scale,
          PS::Comm::getMaxValue(transverse) / disp_scale};
}

// Total acceleration: PM (long range) + cutoff tree (short range).
template <class Tree>
void calcGravity(PS::ParticleSystem<FPTreePM>& psys, PS::DomainInfo& dinfo, PS::PM::ParticleMesh& pm, Tree& tree) {
  pm.calcForceAllAndWriteBack(psys, dinfo);
  tree.calcForceAllAndWriteBack(CalcPPForce<EPTreePM>(), CalcPPForce<PS::SPJMonopoleCutoff>(), psys, dinfo);
}

// Total acceleration from the FMM (acc_pm stays zero).
void calcGravity(PS::ParticleSystem<FPTreePM>& psys, PS::DomainInfo& dinfo,
                 grove::FmmForce<ForcePP, EPTreePM, EPTreePM>& fmm) {
  fmm.calcForceAllAndWriteBack(CalcNewtonForce{}, psys, dinfo, FarFieldAcceleration{});
}

PS::F64vec accelerationOf(const FPTreePM& p) { return p.acc_pm + p.acc_pp; }

int run(const Options& opt) {
  const PS::F64 wall_start = PS::GetWtime();
  const Zeldovich zel{1.0 / opt.a_cross};

  PS::ParticleSystem<FPTreePM> psys;
  psys.initialize();
  PS::DomainInfo dinfo;
  dinfo.initialize();
  dinfo.setBoundaryCondition(PS::BOUNDARY_CONDITION_PERIODIC_XYZ);
  dinfo.setPosRootDomain(PS::F64vec(0.0, 0.0, 0.0), PS::F64vec(1.0, 1.0, 1.0));
  makeInitialConditions(psys, opt, zel);
  psys.adjustPositionIntoRootDomain(dinfo);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);

  // Grove extension: the mesh size at run time (FDPS: the SIZE_OF_MESH macro).
  PS::PM::ParticleMesh pm(opt.mesh);
  EPTreePM::r_cut = PS::PM::CUTOFF_RADIUS / opt.mesh;  // box side 1
  EPTreePM::eps2 = opt.eps * opt.eps;
  PS::TreeForForceLong<ForcePP, EPTreePM, EPTreePM>::MonopoleWithCutoff tree;
  tree.initialize(psys.getNumberOfParticleGlobal(), opt.theta, opt.n_leaf, opt.n_group);
  grove::FmmForce<ForcePP, EPTreePM, EPTreePM> fmm;
  if (opt.fmm) fmm.initialize(psys.getNumberOfParticleLocal(), opt.theta, opt.n_leaf, opt.fmm_order);
  auto gravity = [&] {
    if (opt.fmm) calcGravity(psys, dinfo, fmm);
    else calcGravity(psys, dinfo, pm, tree);
  };

  gravity();
  const PS::F64 dln_a = std::log(opt.a_end / opt.a_start) / opt.steps;
  PS::F64 a = opt.a_start;
  for (PS::S32 step = 0; step < opt.steps; ++step) {
    const PS::F64 a_next = opt.a_start * std::exp(dln_a * (step + 1));
    const PS::F64 a_half = std::sqrt(a * a_next);
    const PS::S32 n_loc = psys.getNumberOfParticleLocal();
    const PS::F64 kick0 = kickFactor(a, a_half), drift = driftFactor(a, a_next), kick1 = kickFactor(a_half, a_next);
    for (PS::S32 i = 0; i < n_loc; ++i) {
      psys[i].mom += accelerationOf(psys[i]) * kick0;
      psys[i].pos += psys[i].mom * drift;
    }
    psys.adjustPositionIntoRootDomain(dinfo);
    dinfo.decomposeDomainAll(psys);
    psys.exchangeParticle(dinfo);
    gravity();
    for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) psys[i].mom += accelerationOf(psys[i]) * kick1;
    a = a_next;
  }

  const Errors e = compare(psys, zel, a);
  const PS::F64 seconds = PS::GetWtime() - wall_start;
  const bool pass = e.disp_l1 <= opt.max_l1 && e.disp_max <= opt.max_max;
  const PS::S64 n_glb = psys.getNumberOfParticleGlobal();  // collective: every rank calls it
  if (PS::Comm::getRank() == 0) {
    std::printf(
        "{\"sample\": \"treepm\", \"problem\": \"zeldovich_pancake\", \"gravity\": \"%s\", \"n\": %lld, "
        "\"mesh\": %d, \"fmm_order\": %d, \"theta\": %g, "
        "\"eps\": %g, \"ranks\": %d, \"a_start\": %g, \"a_end\": %g, \"a_cross\": %g, \"steps\": %d, "
        "\"displacement_l1\": %.4e, \"displacement_max\": %.4e, \"momentum_l1\": %.4e, \"momentum_max\": %.4e, "
        "\"transverse_max\": %.4e, \"bound_l1\": %g, \"bound_max\": %g, \"pass\": %s, \"seconds\": %.3f}\n",
        opt.fmm ? "fmm" : "treepm", static_cast<long long>(n_glb), opt.mesh, opt.fmm ? opt.fmm_order : 0,
        opt.theta, opt.eps,
        PS::Comm::getNumberOfProc(), opt.a_start, a, opt.a_cross, opt.steps, e.disp_l1, e.disp_max, e.mom_l1,
        e.mom_max, e.transverse_max, opt.max_l1, opt.max_max, pass ? "true" : "false", seconds);
    std::fflush(stdout);
    if (!pass)
      std::fprintf(stderr, "treepm: displacement error (L1 %.3e, max %.3e) beyond the bound (%g, %g)\n", e.disp_l1,
                   e.disp_max, opt.max_l1, opt.max_max);
  }
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
  PS::Initialize(argc, argv);
  Options opt;
  CLI::App app{"TreePM (FDPS API): Zel'dovich pancake in an Einstein-de Sitter box against the analytic solution"};
  app.add_option("--n-side", opt.n_side, "particles per axis")->check(CLI::Range(4, 512));
  app.add_option("--mesh", opt.mesh, "PM mesh points per axis (r_cut = 3 cells)")->check(CLI::Range(8, 1024));
  app.add_option("--theta", opt.theta, "opening angle of the cutoff tree")->check(CLI::Range(0.0, 1.5));
  app.add_option("--n-leaf", opt.n_leaf, "most particles in a leaf")->check(CLI::PositiveNumber);
  app.add_option("--n-group", opt.n_group, "most particles in a group sharing one list")->check(CLI::PositiveNumber);
  app.add_option("--eps", opt.eps, "Plummer softening of the PP part (box units)")->check(CLI::NonNegativeNumber);
  app.add_option("--a-start", opt.a_start, "initial expansion factor")->check(CLI::PositiveNumber);
  app.add_option("--a-end", opt.a_end, "final expansion factor (before a-cross)")->check(CLI::PositiveNumber);
  app.add_option("--a-cross", opt.a_cross, "expansion factor of shell crossing (sets the amplitude)")
      ->check(CLI::PositiveNumber);
  app.add_option("--steps", opt.steps, "leapfrog steps, uniform in ln a")->check(CLI::PositiveNumber);
  std::string gravity = "treepm";
  app.add_option("--gravity", gravity, "treepm: PM + cutoff tree (FDPS's); fmm: grove::FmmForce's periodic box")
      ->check(CLI::IsMember({"treepm", "fmm"}));
  app.add_option("--fmm-order", opt.fmm_order, "the FMM's expansion order (periodic boxes: 4 ... 8)")
      ->check(CLI::Range(4, 8));
  app.add_option("--max-l1", opt.max_l1, "bound on the mean displacement error / amplitude (0: the default)");
  app.add_option("--max-max", opt.max_max, "bound on the worst displacement error / amplitude (0: the default)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = PS::Comm::getRank() == 0 ? app.exit(e) : e.get_exit_code();
    PS::Finalize();
    return code;
  }
  opt.fmm = gravity == "fmm";
  if (opt.a_end >= opt.a_cross || opt.a_start >= opt.a_end) {
    if (PS::Comm::getRank() == 0) std::fprintf(stderr, "treepm: need a-start < a-end < a-cross\n");
    PS::Finalize();
    return 2;
  }
  // Default bounds: the default run measures 1.18e-2 and 3.05e-2 at 1-4 ranks (doc/treepm.md),
  // errors of the force resolution (16^3 particles, mesh 32), not of the time step; other runs
  // state their own bounds.
  // --gravity fmm (theta 0.5, order 6) measures 8.0e-3 and 2.2e-2 (1 rank) to 2.7e-2 (2-4 ranks):
  // no mesh, so what is left is the lattice's discreteness and the time step.
  if (opt.max_l1 <= 0.0) opt.max_l1 = opt.fmm ? 1.0e-2 : 1.5e-2;
  if (opt.max_max <= 0.0) opt.max_max = opt.fmm ? 3.5e-2 : 4.0e-2;
  const int status = run(opt);
  PS::Finalize();
  return status;
}
