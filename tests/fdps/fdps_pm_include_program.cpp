// FDPS's TreePM include layout: the Makefile puts FDPS's src/ and its PM folder (PM_ROOT) on the
// include path; the program includes <particle_simulator.hpp>, then <particle_mesh.hpp>, and
// its own <param_fdps.h> later still (FDPS's TreePM sample does so from treepm.hpp). Built with
// this test's param_fdps.h (SIZE_OF_MESH 16) first on the path and grove's PM folder
// (grove/pm/fdps_root) after it: the mesh must take 16, although particle_simulator.hpp, read
// first, already brought grove's particle mesh in. Exits non-zero when it does not.
#include <particle_simulator.hpp>
#include <particle_mesh.hpp>
#include <param_fdps.h>

#include <cstdio>

static_assert(SIZE_OF_MESH == 16, "the program's param_fdps.h was not the one read");

int main(int argc, char* argv[]) {
  PS::Initialize(argc, argv);
  PS::PM::ParticleMesh pm;
  const int mesh = pm.getMeshSize();
  if (PS::Comm::getRank() == 0) std::printf("mesh size %d (SIZE_OF_MESH %d)\n", mesh, SIZE_OF_MESH);
  const bool ok = mesh == SIZE_OF_MESH;
  PS::Finalize();
  return ok ? 0 : 1;
}
