#pragma once
// The sample's trees: a gather tree for the density pass, a symmetry tree for the hydro pass,
// and the gather tree of the GPU engine's density pass, whose result is DensitySums (sums at the
// current h; sph_solver.hpp, computeDensityBySums).
#include "gas_particles.hpp"
#include "grove/force/tree_for_force_short.hpp"

namespace sph {

using DensityTree = grove::TreeForForceShort<DensityResult, DensityEPI, DensityEPJ>::Gather;
using DensitySumsTree = grove::TreeForForceShort<DensitySums, DensityEPI, DensityEPJ>::Gather;
using HydroTree = grove::TreeForForceShort<HydroResult, HydroEP, HydroEP>::Symmetry;

}  // namespace sph
