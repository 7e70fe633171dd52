#pragma once
/// @file
/// FDPS's particle-mesh header by its FDPS name. FDPS programs put their PM folder (PM_ROOT) on
/// the include path and include <particle_mesh.hpp> and <param_fdps.h>; pointing PM_ROOT at this
/// folder gives them grove's particle mesh (grove/pm/particle_mesh.hpp, PS::PM::ParticleMesh),
/// sized by the SIZE_OF_MESH of the param_fdps.h beside this file.
#include <param_fdps.h>  // the first on the include path: a program's own, else the one beside this file
#include "grove/pm/particle_mesh.hpp"
