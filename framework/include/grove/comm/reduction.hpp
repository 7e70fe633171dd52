#pragma once
/// @file
/// How a value is reduced by grove::Comm: as `count` scalars of one arithmetic type. Arithmetic
/// types and Vec3 are covered; a user type made of N scalars of one type can specialise
/// grove::ReductionLayout to be summed, minimised or maximised element by element.
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "grove/comm/backend.hpp"
#include "grove/core/vec3.hpp"

namespace grove {

/// How T is reduced: `using Scalar = ...; static constexpr std::size_t count = ...;`, T being
/// `count` Scalars laid out contiguously. Specialise it for a user type to reduce it element by
/// element.
template <class T>
struct ReductionLayout;  // { using Scalar = ...; static constexpr std::size_t count = ...; }

/// An arithmetic type: one scalar.
template <class T>
  requires std::is_arithmetic_v<T>
struct ReductionLayout<T> {
  using Scalar = T;                        ///< T itself
  static constexpr std::size_t count = 1;  ///< one scalar
};

/// A Vec3: three scalars, x, y, z, reduced one by one.
template <class T>
struct ReductionLayout<Vec3<T>> {
  using Scalar = T;                        ///< the component type
  static constexpr std::size_t count = 3;  ///< x, y, z
};

/// A type whose ReductionLayout is defined and whose size is exactly `count` Scalars.
template <class T>
concept Reducible = requires {
  typename ReductionLayout<T>::Scalar;
  { ReductionLayout<T>::count } -> std::convertible_to<std::size_t>;
} && sizeof(T) == sizeof(typename ReductionLayout<T>::Scalar) * ReductionLayout<T>::count;

namespace detail {

template <class S>
constexpr ScalarKind scalarKindOf() {
  static_assert(std::is_arithmetic_v<S>, "grove::Comm reduces arithmetic scalars only");
  if constexpr (std::is_same_v<S, bool>) {
    static_assert(sizeof(bool) == 1);
    return ScalarKind::UInt8;
  } else if constexpr (std::is_floating_point_v<S>) {
    if constexpr (std::is_same_v<S, float>) return ScalarKind::Float;
    else if constexpr (std::is_same_v<S, double>) return ScalarKind::Double;
    else return ScalarKind::LongDouble;
  } else if constexpr (sizeof(S) == 1) {
    return std::is_signed_v<S> ? ScalarKind::Int8 : ScalarKind::UInt8;
  } else if constexpr (sizeof(S) == 2) {
    return std::is_signed_v<S> ? ScalarKind::Int16 : ScalarKind::UInt16;
  } else if constexpr (sizeof(S) == 4) {
    return std::is_signed_v<S> ? ScalarKind::Int32 : ScalarKind::UInt32;
  } else {
    static_assert(sizeof(S) == 8);
    return std::is_signed_v<S> ? ScalarKind::Int64 : ScalarKind::UInt64;
  }
}

}  // namespace detail
}  // namespace grove
