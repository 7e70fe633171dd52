#pragma once
/// @file
/// FDPS 7.1's names for grove's enums and classes: boundary conditions, list modes, particle
/// systems, domains, the tree classes and their moments, the LET exchange modes. Part of
/// grove/fdps.hpp.
#include "grove/core/list_mode.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "grove/force/tree_for_force_short.hpp"
#include "grove/particles/particle_system.hpp"

namespace grove::fdps {

// ---- enums -----------------------------------------------------------------------------------------
/// FDPS's name of grove::BoundaryCondition. Its values are grove's (one bit per periodic axis:
/// x 1, y 2, z 4), not FDPS's numbers; FDPS's shearing-box and user-defined conditions do not exist.
using BOUNDARY_CONDITION = BoundaryCondition;
/// No periodic axis: BoundaryCondition::OPEN.
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_OPEN = BoundaryCondition::OPEN;
/// Periodic in x: BoundaryCondition::PERIODIC_X.
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_X = BoundaryCondition::PERIODIC_X;
/// Periodic in y: BoundaryCondition::PERIODIC_Y.
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_Y = BoundaryCondition::PERIODIC_Y;
/// Periodic in z: BoundaryCondition::PERIODIC_Z.
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_Z = BoundaryCondition::PERIODIC_Z;
/// Periodic in x and y: BoundaryCondition::PERIODIC_XY.
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XY = BoundaryCondition::PERIODIC_XY;
/// Periodic in x and z: BoundaryCondition::PERIODIC_XZ.
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XZ = BoundaryCondition::PERIODIC_XZ;
/// Periodic in y and z: BoundaryCondition::PERIODIC_YZ.
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_YZ = BoundaryCondition::PERIODIC_YZ;
/// Periodic in all three axes: BoundaryCondition::PERIODIC_XYZ.
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XYZ = BoundaryCondition::PERIODIC_XYZ;

/// FDPS's name of grove::InteractionListMode (MAKE_LIST, MAKE_LIST_FOR_REUSE, REUSE_LIST, which
/// are grove's own enumerators, brought in by using-declarations).
using INTERACTION_LIST_MODE = InteractionListMode;
using ::grove::MAKE_LIST;
using ::grove::MAKE_LIST_FOR_REUSE;
using ::grove::REUSE_LIST;

// ---- classes -----------------------------------------------------------------------------------------
/// PS::ParticleSystem<FP> is grove::ParticleSystem<FP>.
template <class FP>
using ParticleSystem = ::grove::ParticleSystem<FP>;
using DomainInfo = ::grove::DomainInfo;    ///< PS::DomainInfo is grove::DomainInfo.
using TimeProfile = ::grove::TimeProfile;  ///< PS::TimeProfile is grove::TimeProfile.

// ---- Tree classes ------------------------------------------------------------------------------------
/// PS::TreeForForceLong<Force, EPI, EPJ>::Monopole (and Quadrupole, MonopoleGeometricCenter,
/// DipoleGeometricCenter, QuadrupoleGeometricCenter) are grove's trees.
/// PS::TreeForForceLong<Force, EPI, EPJ>::MonopoleWithCutoff and
/// PS::TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>::WithCutoff: FDPS's SEARCH_MODE_LONG_CUTOFF.
/// The same with {Monopole, Quadrupole}With{Scatter, Symmetry}Search and
/// With{Scatter, Symmetry}Search: SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY (grove::TreeForForceLong).
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

/// PS::TreeForForceShort<Force, EPI, EPJ>::Gather (and Scatter, Symmetry) are grove's
/// short-range trees (grove::TreeForForceShort).
template <class Force, class EPI, class EPJ>
using TreeForForceShort = ::grove::TreeForForceShort<Force, EPI, EPJ>;

/// FDPS's LET exchange modes: grove::LetExchangeMode (grove/let/local_essential_tree.hpp).
using EXCHANGE_LET_MODE = ::grove::LetExchangeMode;
/// Every pair of ranks exchanges (possibly empty) LETs: LetExchangeMode::ALL_TO_ALL.
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_A2A = ::grove::LetExchangeMode::ALL_TO_ALL;
/// Near ranks point to point, far ranks by their root superparticle; the same received arrays as
/// EXCHANGE_LET_A2A: LetExchangeMode::POINT_TO_POINT.
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_P2P_EXACT = ::grove::LetExchangeMode::POINT_TO_POINT;
/// "Far" judged for each rank's particles as a whole, so a rank talks only to ranks near it;
/// forces differ from the exact modes by about the tree's own error:
/// LetExchangeMode::POINT_TO_POINT_FAST.
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_P2P_FAST = ::grove::LetExchangeMode::POINT_TO_POINT_FAST;

}  // namespace grove::fdps
