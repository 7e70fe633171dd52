#pragma once
/// @file
/// How local essential trees travel between ranks: the modes of grove/let/local_essential_tree.hpp
/// (the host's trees) and of the GPU-resident tree's ResidentTreeOptions. FDPS spells them
/// EXCHANGE_LET_A2A, EXCHANGE_LET_P2P_EXACT and EXCHANGE_LET_P2P_FAST.
namespace grove {

/// How local essential trees travel between ranks.
enum class LetExchangeMode {
  ALL_TO_ALL,           ///< every pair exchanges (possibly empty) LETs, one alltoallv per type
  POINT_TO_POINT,       ///< near pairs point to point, far ranks by their root superparticle: the
                        ///< same arrays as ALL_TO_ALL (in practice every pair is near)
  POINT_TO_POINT_FAST,  ///< "far" judged for each rank's particles as a whole: a rank talks only
                        ///< to the ranks near it; forces differ by about the tree's own error
};

}  // namespace grove
