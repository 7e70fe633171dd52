#pragma once
/// @file
/// FDPS's generic spelling of a tree, PS::TreeForForce<SEARCH_MODE_*, Force, EPI, EPJ, MomentLocal,
/// MomentGlobal, SPJ[, CALC_DISTANCE_TYPE]>, mapped onto grove's trees:
///  - SEARCH_MODE_LONG         -> TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>
///  - SEARCH_MODE_LONG_CUTOFF  -> the same with the cutoff walk
///  - SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY -> the same with the search walk (walk/long_search.hpp)
///  - CALC_DISTANCE_TYPE_NEAREST_* -> nearest-image distances, for SEARCH_MODE_LONG, LONG_SCATTER
///    and LONG_SYMMETRY (not for the cutoff and short-range modes)
///  - SEARCH_MODE_GATHER / SCATTER / SYMMETRY -> TreeForForceShortWith<Force, EPI, EPJ, mode>
///
/// Grove's long-range trees use one moment type for the local and the global tree, so the two
/// must be the same; the short-range modes ignore the moment and superparticle types (FDPS's
/// wrappers pass placeholders there). A mode or distance type grove lacks is a compile error
/// naming it, never a silent substitute.
#include <cstdint>
#include <type_traits>

#include "grove/force/tree_for_force_long.hpp"
#include "grove/force/tree_for_force_short.hpp"

namespace grove::fdps {

// FDPS's search modes are types (template arguments of TreeForForce) that name their kind of
// force and search by tags and an id, which user code (accelerator kernels, generic helpers)
// may dispatch on.
/// The id of a search mode: each SEARCH_MODE_* type's search_type_id, for user code to dispatch
/// on (FDPS's values, in FDPS's order).
enum SEARCH_MODE {
  LONG_NO_CUTOFF,       ///< SEARCH_MODE_LONG.
  LONG_CUTOFF,          ///< SEARCH_MODE_LONG_CUTOFF.
  LONG_SCATTER,         ///< SEARCH_MODE_LONG_SCATTER.
  LONG_CUTOFF_SCATTER,  ///< SEARCH_MODE_LONG_CUTOFF_SCATTER (no grove tree for it).
  SHORT_GATHER,         ///< SEARCH_MODE_GATHER.
  SHORT_SCATTER,        ///< SEARCH_MODE_SCATTER.
  SHORT_SYMMETRY,       ///< SEARCH_MODE_SYMMETRY.
  LONG_SYMMETRY,        ///< SEARCH_MODE_LONG_SYMMETRY.
};
struct TagForceLong {};                ///< force_type of the long-range search modes.
struct TagForceShort {};               ///< force_type of the short-range search modes.
struct TagSearchLong {};               ///< search_type of SEARCH_MODE_LONG.
struct TagSearchLongCutoff {};         ///< search_type of SEARCH_MODE_LONG_CUTOFF.
struct TagSearchLongScatter {};        ///< search_type of SEARCH_MODE_LONG_SCATTER.
struct TagSearchLongSymmetry {};       ///< search_type of SEARCH_MODE_LONG_SYMMETRY.
struct TagSearchLongCutoffScatter {};  ///< search_type of SEARCH_MODE_LONG_CUTOFF_SCATTER.
struct TagSearchShortGather {};        ///< search_type of SEARCH_MODE_GATHER.
struct TagSearchShortScatter {};       ///< search_type of SEARCH_MODE_SCATTER.
struct TagSearchShortSymmetry {};      ///< search_type of SEARCH_MODE_SYMMETRY.

namespace detail {
template <class Force, class Search, SEARCH_MODE kId>
struct SearchModeTraits {
  using force_type = Force;
  using search_type = Search;
  static constexpr SEARCH_MODE search_type_id = kId;  // FDPS: an unnamed enum; typed here, so comparisons with SEARCH_MODE do not warn
};
}  // namespace detail

/// Long-range force without cutoff (grove::TreeForForceLong): force_type TagForceLong,
/// search_type TagSearchLong, search_type_id LONG_NO_CUTOFF.
struct SEARCH_MODE_LONG : detail::SearchModeTraits<TagForceLong, TagSearchLong, LONG_NO_CUTOFF> {};
/// Long-range force that vanishes beyond EPJ::getRSearch() (the cutoff walk); id LONG_CUTOFF.
struct SEARCH_MODE_LONG_CUTOFF : detail::SearchModeTraits<TagForceLong, TagSearchLongCutoff, LONG_CUTOFF> {};
/// Short-range force, neighbours within the i-particle's search radius; id SHORT_GATHER.
struct SEARCH_MODE_GATHER : detail::SearchModeTraits<TagForceShort, TagSearchShortGather, SHORT_GATHER> {};
/// Short-range force, neighbours whose own search radius reaches the i-particle; id SHORT_SCATTER.
struct SEARCH_MODE_SCATTER : detail::SearchModeTraits<TagForceShort, TagSearchShortScatter, SHORT_SCATTER> {};
/// Short-range force, neighbours within either particle's search radius; id SHORT_SYMMETRY.
struct SEARCH_MODE_SYMMETRY : detail::SearchModeTraits<TagForceShort, TagSearchShortSymmetry, SHORT_SYMMETRY> {};
/// Long-range force with a neighbour search: j-particles whose search radius (EPJ::getRSearch)
/// reaches a group enter its kernel one by one, never inside a superparticle; id LONG_SCATTER.
struct SEARCH_MODE_LONG_SCATTER : detail::SearchModeTraits<TagForceLong, TagSearchLongScatter, LONG_SCATTER> {};
/// As SEARCH_MODE_LONG_SCATTER, and also j-particles within the search radius of the group's
/// i-particles enter one by one; id LONG_SYMMETRY.
struct SEARCH_MODE_LONG_SYMMETRY : detail::SearchModeTraits<TagForceLong, TagSearchLongSymmetry, LONG_SYMMETRY> {};
/// FDPS's long-range cutoff mode with scatter search; id LONG_CUTOFF_SCATTER. Grove has no tree
/// for it: TreeForForce with it is a compile error.
struct SEARCH_MODE_LONG_CUTOFF_SCATTER
    : detail::SearchModeTraits<TagForceLong, TagSearchLongCutoffScatter, LONG_CUTOFF_SCATTER> {};

/// How the distance between particles is measured (FDPS's values: bit 1 x, 2 y, 4 z for the axes
/// measured to the nearest periodic image). NEAREST_* is for SEARCH_MODE_LONG, LONG_SCATTER and
/// LONG_SYMMETRY only (a compile error with the other modes).
enum CALC_DISTANCE_TYPE {
  CALC_DISTANCE_TYPE_NORMAL = 0,        ///< Plain distances.
  CALC_DISTANCE_TYPE_NEAREST_X = 1,     ///< Nearest image in x.
  CALC_DISTANCE_TYPE_NEAREST_Y = 2,     ///< Nearest image in y.
  CALC_DISTANCE_TYPE_NEAREST_XY = 3,    ///< Nearest image in x and y.
  CALC_DISTANCE_TYPE_NEAREST_Z = 4,     ///< Nearest image in z.
  CALC_DISTANCE_TYPE_NEAREST_XZ = 5,    ///< Nearest image in x and z.
  CALC_DISTANCE_TYPE_NEAREST_YZ = 6,    ///< Nearest image in y and z.
  CALC_DISTANCE_TYPE_NEAREST_XYZ = 7,   ///< Nearest image in all three axes.
};

// Placeholders FDPS's short-range wrappers pass as moment and superparticle types.
struct MomentSearchInAndOut {};  ///< Placeholder moment type of FDPS's short-range wrappers (ignored).
struct MomentSearchInOnly {};    ///< Placeholder moment type of FDPS's short-range wrappers (ignored).
struct SuperParticleBase {};     ///< Placeholder superparticle type of FDPS's short-range wrappers (ignored).

namespace detail {

template <class>
inline constexpr bool kUnsupported = false;

template <class Mode, class Force, class EPI, class EPJ, class MomentLocal, class MomentGlobal, class SPJ,
          CALC_DISTANCE_TYPE kDistance>
struct TreeForForceOf {
  static_assert(kUnsupported<Mode>,
                "PS::TreeForForce: grove maps SEARCH_MODE_LONG, SEARCH_MODE_LONG_CUTOFF, SEARCH_MODE_LONG_SCATTER, "
                "SEARCH_MODE_LONG_SYMMETRY, SEARCH_MODE_GATHER, SEARCH_MODE_SCATTER and SEARCH_MODE_SYMMETRY; this "
                "search mode is not available (doc/fdps.md)");
  using type = void;
};

template <class MomentLocal, class MomentGlobal>
consteval bool checkLongTreeMoments() {
  static_assert(std::is_same_v<MomentLocal, MomentGlobal>,
                "PS::TreeForForce: grove's long-range trees use one moment type for the local and the global "
                "tree; pass the same type twice");
  return true;
}

// The search option of a long-range tree: mode and nearest-image axes (FDPS's bits: 1 x, 2 y, 4 z).
template <::grove::LongSearchMode kMode, CALC_DISTANCE_TYPE kDistance>
inline constexpr ::grove::LongSearch kLongSearchOf{kMode, static_cast<std::uint8_t>(kDistance)};

template <class Force, class EPI, class EPJ, class ML, class MG, class SPJ, CALC_DISTANCE_TYPE D>
struct TreeForForceOf<SEARCH_MODE_LONG, Force, EPI, EPJ, ML, MG, SPJ, D> {
  static_assert(checkLongTreeMoments<ML, MG>());
  using type = ::grove::TreeForForceLongWith<Force, EPI, EPJ, MG, SPJ,
                                             typename ::grove::LongWalkOf<kLongSearchOf<::grove::LongSearchMode::NONE, D>>::type>;
};

template <class Force, class EPI, class EPJ, class ML, class MG, class SPJ, CALC_DISTANCE_TYPE D>
struct TreeForForceOf<SEARCH_MODE_LONG_CUTOFF, Force, EPI, EPJ, ML, MG, SPJ, D> {
  static_assert(checkLongTreeMoments<ML, MG>());
  static_assert(D == CALC_DISTANCE_TYPE_NORMAL,
                "PS::TreeForForce: CALC_DISTANCE_TYPE_NEAREST_* is not available with SEARCH_MODE_LONG_CUTOFF; "
                "use a periodic boundary condition (BOUNDARY_CONDITION_PERIODIC_*)");
  using type = ::grove::TreeForForceLongWith<Force, EPI, EPJ, MG, SPJ, ::grove::CutoffWalk>;
};

template <class Force, class EPI, class EPJ, class ML, class MG, class SPJ, CALC_DISTANCE_TYPE D>
struct TreeForForceOf<SEARCH_MODE_LONG_SCATTER, Force, EPI, EPJ, ML, MG, SPJ, D> {
  static_assert(checkLongTreeMoments<ML, MG>());
  using type = ::grove::TreeForForceLongWith<Force, EPI, EPJ, MG, SPJ,
                                             ::grove::SearchWalk<kLongSearchOf<::grove::LongSearchMode::SCATTER, D>>>;
};

template <class Force, class EPI, class EPJ, class ML, class MG, class SPJ, CALC_DISTANCE_TYPE D>
struct TreeForForceOf<SEARCH_MODE_LONG_SYMMETRY, Force, EPI, EPJ, ML, MG, SPJ, D> {
  static_assert(checkLongTreeMoments<ML, MG>());
  using type = ::grove::TreeForForceLongWith<Force, EPI, EPJ, MG, SPJ,
                                             ::grove::SearchWalk<kLongSearchOf<::grove::LongSearchMode::SYMMETRY, D>>>;
};

template <SearchMode kMode, CALC_DISTANCE_TYPE D>
consteval bool checkShortTreeArguments() {
  static_assert(D == CALC_DISTANCE_TYPE_NORMAL,
                "PS::TreeForForce: CALC_DISTANCE_TYPE_NEAREST_* is not available; short-range trees take periodic "
                "images from DomainInfo's boundary condition (BOUNDARY_CONDITION_PERIODIC_*)");
  return true;
}

template <class Force, class EPI, class EPJ, class ML, class MG, class SPJ, CALC_DISTANCE_TYPE D>
struct TreeForForceOf<SEARCH_MODE_GATHER, Force, EPI, EPJ, ML, MG, SPJ, D> {
  static_assert(checkShortTreeArguments<SearchMode::GATHER, D>());
  using type = ::grove::TreeForForceShortWith<Force, EPI, EPJ, SearchMode::GATHER>;
};
template <class Force, class EPI, class EPJ, class ML, class MG, class SPJ, CALC_DISTANCE_TYPE D>
struct TreeForForceOf<SEARCH_MODE_SCATTER, Force, EPI, EPJ, ML, MG, SPJ, D> {
  static_assert(checkShortTreeArguments<SearchMode::SCATTER, D>());
  using type = ::grove::TreeForForceShortWith<Force, EPI, EPJ, SearchMode::SCATTER>;
};
template <class Force, class EPI, class EPJ, class ML, class MG, class SPJ, CALC_DISTANCE_TYPE D>
struct TreeForForceOf<SEARCH_MODE_SYMMETRY, Force, EPI, EPJ, ML, MG, SPJ, D> {
  static_assert(checkShortTreeArguments<SearchMode::SYMMETRY, D>());
  using type = ::grove::TreeForForceShortWith<Force, EPI, EPJ, SearchMode::SYMMETRY>;
};

}  // namespace detail

/// FDPS's generic tree: the grove tree that Mode (a SEARCH_MODE_* type) maps to, as listed in
/// this file's description. For the long-range modes MomentLocal and MomentGlobal must be the same
/// type; the short-range modes ignore them and SPJ. An unmapped mode or distance type is a
/// compile error naming it.
template <class Mode, class Force, class EPI, class EPJ, class MomentLocal, class MomentGlobal, class SPJ,
          CALC_DISTANCE_TYPE kDistance = CALC_DISTANCE_TYPE_NORMAL>
using TreeForForce =
    typename detail::TreeForForceOf<Mode, Force, EPI, EPJ, MomentLocal, MomentGlobal, SPJ, kDistance>::type;

}  // namespace grove::fdps
