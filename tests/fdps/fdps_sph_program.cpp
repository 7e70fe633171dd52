// An SPH program written against FDPS 7.1's API as its sph sample is: a Gather tree for the
// density and a Symmetry tree for the pressure force, in a periodic box. It must compile
// unchanged against grove's drop-in header. On a uniform periodic lattice it checks that every
// particle gets the same density (the lattice is translation-invariant), that it is close to
// mass / spacing^3, that the pressure forces vanish, and that their sum (momentum) is zero.
#include <particle_simulator.hpp>

#include <cmath>
#include <cstdio>

namespace RESULT {
class Dens {
 public:
  PS::F64 dens;
  void clear() { dens = 0; }
};
class Hydro {
 public:
  PS::F64vec acc;
  void clear() { acc = 0; }
};
}  // namespace RESULT

const PS::F64 kernel_support = 2.0;  // cubic spline: W vanishes beyond 2h

class RealPtcl {
 public:
  PS::S64 id;
  PS::F64 mass, smth, dens, pres;
  PS::F64vec pos, vel, acc;
  PS::F64vec getPos() const { return pos; }
  void setPos(const PS::F64vec& p) { pos = p; }
  void copyFromForce(const RESULT::Dens& d) { dens = d.dens; }
  void copyFromForce(const RESULT::Hydro& h) { acc = h.acc; }
};

namespace EPI {
class Dens {
 public:
  PS::F64vec pos;
  PS::F64 mass, smth;
  PS::F64vec getPos() const { return pos; }
  PS::F64 getRSearch() const { return kernel_support * smth; }
  void copyFromFP(const RealPtcl& rp) {
    pos = rp.pos;
    mass = rp.mass;
    smth = rp.smth;
  }
};
class Hydro {
 public:
  PS::F64vec pos;
  PS::F64 mass, smth, dens, pres;
  PS::F64vec getPos() const { return pos; }
  PS::F64 getRSearch() const { return kernel_support * smth; }
  void copyFromFP(const RealPtcl& rp) {
    pos = rp.pos;
    mass = rp.mass;
    smth = rp.smth;
    dens = rp.dens;
    pres = rp.pres;
  }
};
}  // namespace EPI

namespace EPJ {
class Dens {
 public:
  PS::F64vec pos;
  PS::F64 mass, smth;
  PS::F64vec getPos() const { return pos; }
  void setPos(const PS::F64vec& p) { pos = p; }
  PS::F64 getRSearch() const { return kernel_support * smth; }
  void copyFromFP(const RealPtcl& rp) {
    pos = rp.pos;
    mass = rp.mass;
    smth = rp.smth;
  }
};
class Hydro {
 public:
  PS::F64vec pos;
  PS::F64 mass, smth, dens, pres;
  PS::F64vec getPos() const { return pos; }
  void setPos(const PS::F64vec& p) { pos = p; }
  PS::F64 getRSearch() const { return kernel_support * smth; }
  void copyFromFP(const RealPtcl& rp) {
    pos = rp.pos;
    mass = rp.mass;
    smth = rp.smth;
    dens = rp.dens;
    pres = rp.pres;
  }
};
}  // namespace EPJ

// Cubic spline (Monaghan & Lattanzio), 3-D, support 2h.
PS::F64 W(const PS::F64 r, const PS::F64 h) {
  const PS::F64 q = r / h, sigma = 1.0 / (M_PI * h * h * h);
  if (q < 1.0) return sigma * (1.0 - 1.5 * q * q + 0.75 * q * q * q);
  if (q < 2.0) return sigma * 0.25 * (2.0 - q) * (2.0 - q) * (2.0 - q);
  return 0.0;
}
PS::F64vec gradW(const PS::F64vec dr, const PS::F64 h) {
  const PS::F64 r = std::sqrt(dr * dr), q = r / h, sigma = 1.0 / (M_PI * h * h * h * h);
  if (r == 0.0) return 0.0;
  PS::F64 dwdq = 0.0;
  if (q < 1.0) dwdq = sigma * (-3.0 * q + 2.25 * q * q);
  else if (q < 2.0) dwdq = -0.75 * sigma * (2.0 - q) * (2.0 - q);
  return dwdq / r * dr;
}

class CalcDensity {
 public:
  void operator()(const EPI::Dens* const ep_i, const PS::S32 Nip, const EPJ::Dens* const ep_j, const PS::S32 Njp,
                  RESULT::Dens* const dens) {
    for (PS::S32 i = 0; i < Nip; ++i)
      for (PS::S32 j = 0; j < Njp; ++j) {
        const PS::F64vec dr = ep_j[j].pos - ep_i[i].pos;
        dens[i].dens += ep_j[j].mass * W(std::sqrt(dr * dr), ep_i[i].smth);
      }
  }
};

class CalcHydroForce {
 public:
  void operator()(const EPI::Hydro* const ep_i, const PS::S32 Nip, const EPJ::Hydro* const ep_j, const PS::S32 Njp,
                  RESULT::Hydro* const hydro) {
    for (PS::S32 i = 0; i < Nip; ++i)
      for (PS::S32 j = 0; j < Njp; ++j) {
        const PS::F64vec dr = ep_i[i].pos - ep_j[j].pos;
        const PS::F64vec grad = 0.5 * (gradW(dr, ep_i[i].smth) + gradW(dr, ep_j[j].smth));
        const PS::F64 p_term = ep_i[i].pres / (ep_i[i].dens * ep_i[i].dens) + ep_j[j].pres / (ep_j[j].dens * ep_j[j].dens);
        hydro[i].acc -= ep_j[j].mass * p_term * grad;
      }
  }
};

int main(int argc, char* argv[]) {
  PS::Initialize(argc, argv);
  const PS::S32 n_side = 12;
  const PS::F64 spacing = 1.0 / n_side, mass = 1.0 / (n_side * n_side * n_side);
  PS::ParticleSystem<RealPtcl> sph_system;
  sph_system.initialize();
  if (PS::Comm::getRank() == 0) {
    sph_system.setNumberOfParticleLocal(n_side * n_side * n_side);
    PS::S32 k = 0;
    for (PS::S32 x = 0; x < n_side; ++x)
      for (PS::S32 y = 0; y < n_side; ++y)
        for (PS::S32 z = 0; z < n_side; ++z, ++k) {
          sph_system[k].id = k;
          sph_system[k].pos = PS::F64vec((x + 0.5) * spacing, (y + 0.5) * spacing, (z + 0.5) * spacing);
          sph_system[k].mass = mass;
          sph_system[k].smth = 1.2 * spacing;
          sph_system[k].vel = 0.0;
        }
  } else {
    sph_system.setNumberOfParticleLocal(0);
  }
  PS::DomainInfo dinfo;
  dinfo.initialize();
  dinfo.setBoundaryCondition(PS::BOUNDARY_CONDITION_PERIODIC_XYZ);
  dinfo.setPosRootDomain(PS::F64vec(0.0, 0.0, 0.0), PS::F64vec(1.0, 1.0, 1.0));
  sph_system.adjustPositionIntoRootDomain(dinfo);
  dinfo.decomposeDomainAll(sph_system);
  sph_system.exchangeParticle(dinfo);

  PS::TreeForForceShort<RESULT::Dens, EPI::Dens, EPJ::Dens>::Gather dens_tree;
  dens_tree.initialize(3 * sph_system.getNumberOfParticleGlobal());
  PS::TreeForForceShort<RESULT::Hydro, EPI::Hydro, EPJ::Hydro>::Symmetry hydro_tree;
  hydro_tree.initialize(3 * sph_system.getNumberOfParticleGlobal());

  dens_tree.calcForceAllAndWriteBack(CalcDensity(), sph_system, dinfo);
  for (PS::S32 i = 0; i < sph_system.getNumberOfParticleLocal(); ++i) sph_system[i].pres = 0.4 * sph_system[i].dens;
  hydro_tree.calcForceAllAndWriteBack(CalcHydroForce(), sph_system, dinfo);

  PS::F64 dens_min = 1e300, dens_max = -1e300, acc_max = 0.0;
  PS::F64vec momentum = 0.0;
  for (PS::S32 i = 0; i < sph_system.getNumberOfParticleLocal(); ++i) {
    dens_min = std::min(dens_min, sph_system[i].dens);
    dens_max = std::max(dens_max, sph_system[i].dens);
    acc_max = std::max(acc_max, std::sqrt(sph_system[i].acc * sph_system[i].acc));
    momentum += sph_system[i].mass * sph_system[i].acc;
  }
  dens_min = PS::Comm::getMinValue(dens_min);
  dens_max = PS::Comm::getMaxValue(dens_max);
  acc_max = PS::Comm::getMaxValue(acc_max);
  momentum = PS::Comm::getSum(momentum);
  const PS::S64 n_glb = sph_system.getNumberOfParticleGlobal();
  int failures = 0;
  if (n_glb != n_side * n_side * n_side) ++failures;
  if ((dens_max - dens_min) > 1e-12 * dens_max) ++failures;           // translation invariance
  if (std::fabs(dens_min - 1.0) > 0.02) ++failures;                    // mass / spacing^3 = 1
  if (acc_max > 1e-10) ++failures;                                     // uniform pressure: no force
  if (std::sqrt(momentum * momentum) > 1e-12) ++failures;              // symmetric force
  if (PS::Comm::getRank() == 0)
    std::printf("fdps sph program: n %lld density [%.15f, %.15f] max |acc| %.3e |sum m a| %.3e -> %s\n",
                static_cast<long long>(n_glb), dens_min, dens_max, acc_max, std::sqrt(momentum * momentum),
                failures ? "FAILED" : "ok");
  PS::Finalize();
  return failures ? 1 : 0;
}
