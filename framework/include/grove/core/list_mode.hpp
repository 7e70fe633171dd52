#pragma once
/// @file
/// grove::InteractionListMode: what a force calculation does with its interaction lists.
#include <string_view>

#include "grove/core/error.hpp"

namespace grove {

/// What a force calculation does with its interaction lists (FDPS's INTERACTION_LIST_MODE).
/// Unscoped, as in FDPS, so that grove::MAKE_LIST and PS::MAKE_LIST both read naturally.
enum InteractionListMode : int {
  MAKE_LIST = 0,            ///< build the lists, use them, drop them
  MAKE_LIST_FOR_REUSE = 1,  ///< build the lists and keep them (tree shape, LET patterns, groups)
  /// use the kept lists with refreshed particle data; particles must not have been exchanged
  /// since the MAKE_LIST_FOR_REUSE
  REUSE_LIST = 2,
};

/// The enumerator's name, e.g. "MAKE_LIST"; "invalid" for any other value.
constexpr std::string_view toString(InteractionListMode mode) {
  switch (mode) {
    case MAKE_LIST: return "MAKE_LIST";
    case MAKE_LIST_FOR_REUSE: return "MAKE_LIST_FOR_REUSE";
    case REUSE_LIST: return "REUSE_LIST";
  }
  return "invalid";
}

/// FDPS 7.1's force calls end with `bool flag_serialize = false` (serialize the LET, for particle
/// types with variable-size data). FDPS does not implement it either; a program that spells the
/// default out compiles, one that asks for it is refused: throws grove::Error with stage `where`
/// when flag_serialize is true.
inline void refuseLetSerialization(bool flag_serialize, const char* where) {
  require(!flag_serialize, where, "LET serialization (flag_serialize = true) is not supported (nor in FDPS 7.1)");
}

}  // namespace grove
