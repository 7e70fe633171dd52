#pragma once
/// @file
/// How a particle type names the members a snapshot holds (grove/io/snapshot.hpp), once:
///
/// @code
///   static constexpr auto snapshotFields() {
///     return std::tuple{grove::io::field("Coordinates", &Body::pos), grove::io::field("ParticleIDs", &Body::id)};
///   }
/// @endcode
/// Apart from snapshot.hpp so that particle classes which CUDA translation units include too
/// (user_templates) can name their fields without the rest of grove.
#include <tuple>

namespace grove::io {

/// A named member of FP: the name of its table in a snapshot, and the pointer to the member. Made
/// by field().
template <class FP, class M>
struct Field {
  const char* name;  ///< the table's name in the snapshot, e.g. "Coordinates"
  M FP::*member;  ///< the member of FP the table holds
};
/// The Field naming member `member` of FP `name` (a string that outlives the Field, such as a
/// literal); usable in constant expressions.
template <class FP, class M>
constexpr Field<FP, M> field(const char* name, M FP::*member) {
  return {name, member};
}

/// Particle types that name their snapshot members: a static `snapshotFields()` (returning a
/// std::tuple of Field, as above).
template <class FP>
concept HasSnapshotFields = requires { FP::snapshotFields(); };

}  // namespace grove::io
