// FDPS's TreePM include layout: the Makefile puts FDPS's src/ and its PM folder (PM_ROOT) on the
// include path; the program includes <particle_simulator.hpp>, then <particle_mesh.hpp>, and
// its own <param_fdps.h> later still (FDPS's TreePM sample does so from treepm.hpp). Built with
// this test's param_fdps.h (SIZE_OF_MESH 16) first on the path and grove's PM folder
// (grove/pm/fdps_root) after it: the mesh must take 16, although particle_simulator.hpp, read
// first, already brought grove's particle mesh in.
// As in that sample, the mesh lives in main's scope and PS::Finalize() comes before its end: the
// mesh, having computed, must go out of scope after MPI is finalized without MPI aborting the run.
// Exits non-zero when a check fails.
#include <particle_simulator.hpp>
#include <particle_mesh.hpp>
#include <param_fdps.h>

#include <cstdio>

static_assert(SIZE_OF_MESH == 16, "the program's param_fdps.h was not the one read");

struct Body {
  PS::F64vec pos;
  PS::F64 mass = 1.0;
  PS::F64vec acc_pm;
  PS::F64vec getPos() const { return pos; }
  PS::F64 getChargeParticleMesh() const { return mass; }
  void copyFromForceParticleMesh(const PS::F32vec& a) { acc_pm = a; }
};

int main(int argc, char* argv[]) {
  PS::Initialize(argc, argv);
  PS::PM::ParticleMesh pm;
  const int mesh = pm.getMeshSize();
  bool ok = mesh == SIZE_OF_MESH;

  // Two bodies a quarter of the box apart along x, on rank 0: the mesh pulls them together.
  PS::ParticleSystem<Body> bodies;
  bodies.initialize();
  if (PS::Comm::getRank() == 0) {
    bodies.setNumberOfParticleLocal(2);
    bodies[0].pos = PS::F64vec(0.375, 0.5, 0.5);
    bodies[1].pos = PS::F64vec(0.625, 0.5, 0.5);
  }
  PS::DomainInfo dinfo;
  dinfo.initialize();
  dinfo.setBoundaryCondition(PS::BOUNDARY_CONDITION_PERIODIC_XYZ);
  dinfo.setPosRootDomain(PS::F64vec(0.0), PS::F64vec(1.0));
  dinfo.decomposeDomainAll(bodies);
  bodies.exchangeParticle(dinfo);
  pm.calcForceAllAndWriteBack(bodies, dinfo);
  for (PS::S32 i = 0; i < bodies.getNumberOfParticleLocal(); ++i) {
    const double towards_other = bodies[i].pos.x < 0.5 ? bodies[i].acc_pm.x : -bodies[i].acc_pm.x;
    ok = ok && towards_other > 0.0;
  }
  ok = PS::Comm::synchronizeConditionalBranchAND(ok);
  if (PS::Comm::getRank() == 0) std::printf("mesh size %d (SIZE_OF_MESH %d): %s\n", mesh, SIZE_OF_MESH, ok ? "ok" : "FAILED");
  PS::Finalize();
  return ok ? 0 : 1;
}  // pm, bodies and dinfo end here, after MPI_Finalize
