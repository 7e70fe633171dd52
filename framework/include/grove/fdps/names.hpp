#pragma once
// FDPS 7.1's names for grove's enums and classes: boundary conditions, list modes, particle
// systems, domains, the tree classes and their moments, the LET exchange modes. Part of
// grove/fdps.hpp.
#include "grove/core/list_mode.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "grove/force/tree_for_force_short.hpp"
#include "grove/particles/particle_system.hpp"

namespace grove::fdps {

// ---- enums -----------------------------------------------------------------------------------------
using BOUNDARY_CONDITION = BoundaryCondition;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_OPEN = BoundaryCondition::OPEN;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_X = BoundaryCondition::PERIODIC_X;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_Y = BoundaryCondition::PERIODIC_Y;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_Z = BoundaryCondition::PERIODIC_Z;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XY = BoundaryCondition::PERIODIC_XY;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XZ = BoundaryCondition::PERIODIC_XZ;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_YZ = BoundaryCondition::PERIODIC_YZ;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XYZ = BoundaryCondition::PERIODIC_XYZ;

using INTERACTION_LIST_MODE = InteractionListMode;
using ::grove::MAKE_LIST;
using ::grove::MAKE_LIST_FOR_REUSE;
using ::grove::REUSE_LIST;

// ---- classes -----------------------------------------------------------------------------------------
template <class FP>
using ParticleSystem = ::grove::ParticleSystem<FP>;
using DomainInfo = ::grove::DomainInfo;
using TimeProfile = ::grove::TimeProfile;

// ---- Tree classes ------------------------------------------------------------------------------------
// PS::TreeForForceLong<Force, EPI, EPJ>::Monopole (and Quadrupole, MonopoleGeometricCenter,
// DipoleGeometricCenter, QuadrupoleGeometricCenter) are grove's trees.
// PS::TreeForForceLong<Force, EPI, EPJ>::MonopoleWithCutoff and
// PS::TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>::WithCutoff: FDPS's SEARCH_MODE_LONG_CUTOFF.
template <class Force, class EPI, class EPJ, class Moment = void, class SPJ = void>
using TreeForForceLong = ::grove::TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>;
using ::grove::MomentMonopoleCutoff;
using ::grove::SPJMonopoleCutoff;
// PS::TreeForForceLong<Force, EPI, EPJ>::{Monopole, Quadrupole}With{Scatter, Symmetry}Search and
// PS::TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>::With{Scatter, Symmetry}Search: FDPS's
// SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY.
using ::grove::MomentMonopoleScatter;
using ::grove::MomentMonopoleSymmetry;
using ::grove::MomentQuadrupoleScatter;
using ::grove::MomentQuadrupoleSymmetry;
using ::grove::SPJMonopoleScatter;
using ::grove::SPJMonopoleSymmetry;
using ::grove::SPJQuadrupoleScatter;
using ::grove::SPJQuadrupoleSymmetry;

using ::grove::MomentDipoleGeometricCenter;
using ::grove::MomentMonopole;
using ::grove::MomentMonopoleGeometricCenter;
using ::grove::MomentQuadrupole;
using ::grove::MomentQuadrupoleGeometricCenter;
using ::grove::SPJDipoleGeometricCenter;
using ::grove::SPJMonopole;
using ::grove::SPJMonopoleGeometricCenter;
using ::grove::SPJQuadrupole;
using ::grove::SPJQuadrupoleGeometricCenter;

template <class Force, class EPI, class EPJ>
using TreeForForceShort = ::grove::TreeForForceShort<Force, EPI, EPJ>;

// FDPS's LET exchange modes; both point-to-point flavours map to grove's point-to-point mode,
// which is exact (far ranks enter as their root superparticle, as the criterion allows).
using EXCHANGE_LET_MODE = ::grove::LetExchangeMode;
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_A2A = ::grove::LetExchangeMode::ALL_TO_ALL;
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_P2P_EXACT = ::grove::LetExchangeMode::POINT_TO_POINT;
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_P2P_FAST = ::grove::LetExchangeMode::POINT_TO_POINT_FAST;

}  // namespace grove::fdps
