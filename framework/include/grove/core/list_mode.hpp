#pragma once
// What a force calculation does with its interaction lists (FDPS's INTERACTION_LIST_MODE).
//   MAKE_LIST            build the lists, use them, drop them
//   MAKE_LIST_FOR_REUSE  build the lists and keep them (tree shape, LET patterns, groups)
//   REUSE_LIST           use the kept lists with refreshed particle data; particles must not have
//                        been exchanged since the MAKE_LIST_FOR_REUSE
// Unscoped, as in FDPS, so that grove::MAKE_LIST and PS::MAKE_LIST both read naturally.
#include <string_view>

namespace grove {

enum InteractionListMode : int {
  MAKE_LIST = 0,
  MAKE_LIST_FOR_REUSE = 1,
  REUSE_LIST = 2,
};

constexpr std::string_view toString(InteractionListMode mode) {
  switch (mode) {
    case MAKE_LIST: return "MAKE_LIST";
    case MAKE_LIST_FOR_REUSE: return "MAKE_LIST_FOR_REUSE";
    case REUSE_LIST: return "REUSE_LIST";
  }
  return "invalid";
}

}  // namespace grove
