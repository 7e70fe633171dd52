#pragma once
/// @file
/// FDPS 7.1 spellings of grove, in namespace grove::fdps, so that an FDPS program ports by
/// including `<particle_simulator.hpp>` (which makes them visible as `PS::`):
///
/// @code
///   PS::Initialize(argc, argv);                  // starts a grove::Runtime
///   PS::ParticleSystem<FP> psys;  psys.initialize();
///   PS::DomainInfo dinfo;         dinfo.initialize();
///   dinfo.decomposeDomainAll(psys);  psys.exchangeParticle(dinfo);
///   PS::F64 e = PS::Comm::getSum(e_local);
///   PS::Finalize();
/// @endcode
///
/// What is grove's own is used directly: F64vec is grove::Vec3<double>, ParticleSystem and
/// DomainInfo are grove's, the enum values are grove's. What FDPS has and grove has not (the
/// Orthotope and symmetric-matrix value types with FDPS's member names, the static Comm class,
/// the Mersenne twisters) is defined in grove/fdps/, over grove.
///
/// Differences from FDPS that a port can meet (each a compile error, never a silent change):
///  - 3-D only; no S32vec/U64vec (grove's vectors are floating point), no 2-D types.
///  - FDPS's vectors' members getMax, getMin, applyEach, getDistanceSQ, isnan, isinf do not
///    exist on grove::Vec3 (use grove::max/min/norm2/isFinite); narrowing F64vec -> F32vec must
///    be written as a cast.
///  - DomainInfo::getPosDomain/getPosRootDomain return grove::Box (members low, high); assign
///    them to a PS::F64ort to use FDPS's low_/high_.
///  - `BOUNDARY_CONDITION_SHEARING_BOX` and `BOUNDARY_CONDITION_USER_DEFINED` do not exist; the
///    enumerators' numeric values are grove's (one bit per periodic axis), not FDPS's.
///  - getCommInfo is not offered (DomainInfo and ParticleSystem take one by setCommInfo).
///    Without PARTICLE_SIMULATOR_MPI_PARALLEL no MPI handle is offered either (PS::CommInfo has
///    no MPI_Comm constructor, PS::Comm no getCommunicator, PS::GetDataType does not exist):
///    grove keeps mpi.h out of user code unless the program asks for it.
///
// The standard headers below are those FDPS's headers bring in; FDPS programs rely on them.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <climits>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <istream>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "grove/config.hpp"
// An FDPS program built for MPI defines PARTICLE_SIMULATOR_MPI_PARALLEL and expects mpi.h from
// FDPS's header (it calls MPI_Allreduce, MPI::COMM_WORLD, PS::GetDataType). Only this door opens
// it: grove's own headers keep mpi.h out.
#if defined(PARTICLE_SIMULATOR_MPI_PARALLEL)
#if !GROVE_HAS_MPI
#error "PARTICLE_SIMULATOR_MPI_PARALLEL is defined, but grove was built without MPI (GROVE_MPI=OFF)"
#endif
#include <mpi.h>
#endif

// The FDPS spellings, by topic.
#include "grove/fdps/vectors.hpp"
#include "grove/fdps/orthotope.hpp"
#include "grove/fdps/matrix_sym.hpp"
#include "grove/fdps/names.hpp"
#include "grove/fdps/initialize.hpp"
#include "grove/fdps/static_comm.hpp"
#include "grove/fdps/random.hpp"

#include "grove/fdps/timer.hpp"
#include "grove/fdps/tree_for_force.hpp"
#include "grove/fdps/utilities.hpp"

#if defined(PARTICLE_SIMULATOR_MPI_PARALLEL)
#include "grove/fdps/mpi_datatype.hpp"
#endif

// FDPS's extension namespace ParticleMesh (alias PM): PS::PM::ParticleMesh, where grove was
// built with FFTW (GROVE_HAS_PM). Grove's own spelling is grove::pm (grove/pm/particle_mesh.hpp).
#if GROVE_HAS_PM
#include "grove/pm/particle_mesh.hpp"
namespace grove::fdps {
/// FDPS's extension namespace ParticleMesh (alias PM): PS::PM::ParticleMesh and its cutoff
/// functions, grove::pm's (grove/pm/particle_mesh.hpp). Only where grove was built with FFTW
/// (GROVE_HAS_PM).
namespace ParticleMesh {
using ::grove::pm::CUTOFF_RADIUS;
using ::grove::pm::ParticleMesh;
using ::grove::pm::cutoffForceFactor;
using ::grove::pm::cutoffPotentialFactor;
using ::grove::pm::longRangeSelfPotential;
}  // namespace ParticleMesh
namespace PM = ParticleMesh;
}  // namespace grove::fdps
#endif
