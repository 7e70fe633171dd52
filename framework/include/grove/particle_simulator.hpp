#pragma once
/// @file
/// Drop-in for FDPS's particle_simulator.hpp: an FDPS program compiled with this directory
/// (framework/include/grove) on its include path and linked with grove::grove finds grove here,
/// under the names it already uses.
///
/// ParticleSimulator is a real namespace, as in FDPS, with PS its alias: a program may add its
/// own types and functions to it. Grove's FDPS layer lives in grove::fdps and is made visible in
/// ParticleSimulator by a using-directive, so PS::F64vec, PS::Vector3<T>, PS::Comm, ... are found
/// by qualified lookup exactly as in FDPS.
///
/// With PARTICLE_SIMULATOR_MPI_PARALLEL defined (as FDPS's MPI builds do), mpi.h comes in here,
/// PS::GetDataType<T>() and PS::Comm::getCommunicator() exist, and the program may call MPI itself.
#include "grove/fdps.hpp"

/// FDPS's namespace (alias PS), holding grove::fdps by a using-directive; a program may add its
/// own types and functions to it.
namespace ParticleSimulator {
using namespace ::grove::fdps;
}  // namespace ParticleSimulator

namespace PS = ParticleSimulator;
