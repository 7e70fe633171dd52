#pragma once
// How a particle type names the members a snapshot holds (grove/io/snapshot.hpp), once:
//
//   static constexpr auto snapshotFields() {
//     return std::tuple{grove::io::field("Coordinates", &Body::pos), grove::io::field("ParticleIDs", &Body::id)};
//   }
//
// Apart from snapshot.hpp so that particle classes which CUDA translation units include too
// (user_templates) can name their fields without the rest of grove.
#include <tuple>

namespace grove::io {

// A named member of FP.
template <class FP, class M>
struct Field {
  const char* name;
  M FP::*member;
};
template <class FP, class M>
constexpr Field<FP, M> field(const char* name, M FP::*member) {
  return {name, member};
}

template <class FP>
concept HasSnapshotFields = requires { FP::snapshotFields(); };

}  // namespace grove::io
