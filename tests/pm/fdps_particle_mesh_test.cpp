// An FDPS-spelled program's use of the particle-mesh module: PS::PM::ParticleMesh from
// particle_simulator.hpp, FDPS's member names, F32vec in and out, its constants.
#include <gtest/gtest.h>

#include <cmath>

#include "grove/particle_simulator.hpp"

namespace {

class FP {
 public:
  PS::S64 id;
  PS::F64 mass;
  PS::F64vec pos;
  PS::F64vec acc_pm;
  PS::F64vec getPos() const { return pos; }
  void setPos(const PS::F64vec& p) { pos = p; }
  PS::F64 getChargeParticleMesh() const { return mass; }
  void copyFromForceParticleMesh(const PS::F32vec& apm) { acc_pm = apm; }
};

}  // namespace

TEST(FdpsParticleMesh, SpelledAsFdpsAndTwoMassesAttract) {
  static_assert(PS::ParticleMesh::CUTOFF_RADIUS == 3.0);
  PS::ParticleSystem<FP> system;
  system.initialize();
  PS::DomainInfo dinfo;
  dinfo.initialize();
  dinfo.setBoundaryCondition(PS::BOUNDARY_CONDITION_PERIODIC_XYZ);
  dinfo.setPosRootDomain(PS::F64vec(0.0, 0.0, 0.0), PS::F64vec(1.0, 1.0, 1.0));
  if (PS::Comm::getRank() == 0) {
    system.setNumberOfParticleLocal(2);
    system[0].id = 0;
    system[0].mass = 1.0;
    system[0].pos = PS::F64vec(0.4, 0.5, 0.5);
    system[1].id = 1;
    system[1].mass = 1.0;
    system[1].pos = PS::F64vec(0.6, 0.5, 0.5);
  } else {
    system.setNumberOfParticleLocal(0);
  }
  dinfo.decomposeDomainAll(system);
  system.exchangeParticle(dinfo);

  PS::PM::ParticleMesh pm;  // SIZE_OF_MESH = 128: r_cut = 3/128 < 0.2, so PM alone is the whole force
  pm.calcForceAllAndWriteBack(system, dinfo);
  for (PS::S32 i = 0; i < system.getNumberOfParticleLocal(); ++i) {
    const PS::F64 toward_other = system[i].id == 0 ? 1.0 : -1.0;
    // 1/0.2^2 = 25 from the nearest image, less the far images' pull the other way.
    EXPECT_GT(system[i].acc_pm.x * toward_other, 20.0);
    EXPECT_LT(system[i].acc_pm.x * toward_other, 25.0);
    const PS::F32vec f = pm.getForce(PS::F32vec(system[i].pos));
    // Near a particle its own long-range field is steep (~ m / r_cut^3 per unit length), so the
    // float rounding of the position moves the value a little.
    EXPECT_NEAR(f.x, system[i].acc_pm.x, 2e-3 * std::abs(system[i].acc_pm.x));
    EXPECT_LT(pm.getPotential(PS::F32vec(system[i].pos)), 0.0f);
  }
}
