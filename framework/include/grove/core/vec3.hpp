#pragma once
/// @file
/// grove::Vec3<T>, the 3-vector of positions and forces, and its free functions.
#include <cmath>
#include <concepts>
#include <cstddef>
#include <fmt/format.h>

#include "grove/core/finite.hpp"

namespace grove {

/// A 3-vector of float or double. Trivially copyable, so it travels through grove::Comm and into
/// device buffers as plain bytes.
template <std::floating_point T>
struct Vec3 {
  /// The x component (0 by default).
  T x{}, y{}, z{};
  /// @var y
  /// The y component (0 by default).

  /// @var z
  /// The z component (0 by default).


  constexpr Vec3() = default;  ///< (0, 0, 0)
  /// (x_, y_, z_).
  constexpr Vec3(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
  /// (s, s, s). Implicit, as FDPS's vectors: FDPS programs write `F64vec acc = 0.0;` and `acc = 0;`.
  constexpr Vec3(T s) : x(s), y(s), z(s) {}
  /// Converts from the other precision, component by component (static_cast). Implicit both
  /// ways, as FDPS's Vector3 (FDPS programs write `F32vec f = pos64;`). Arithmetic mixing float
  /// and double vectors stays ambiguous, hence a compile error, in grove's own headers;
  /// grove/fdps.hpp adds FDPS's mixed forms (the left operand's precision).
  template <std::floating_point U>
    requires(!std::same_as<U, T>)
  constexpr Vec3(const Vec3<U>& o)
      : x(static_cast<T>(o.x)), y(static_cast<T>(o.y)), z(static_cast<T>(o.z)) {}

  /// x, y or z for i = 0, 1, 2 (any i > 1 gives z).
  constexpr T& operator[](std::size_t i) { return i == 0 ? x : (i == 1 ? y : z); }
  /// x, y or z for i = 0, 1, 2 (any i > 1 gives z).
  constexpr const T& operator[](std::size_t i) const { return i == 0 ? x : (i == 1 ? y : z); }

  /// Component-wise sum.
  constexpr Vec3& operator+=(const Vec3& o) { x += o.x; y += o.y; z += o.z; return *this; }
  /// Component-wise difference.
  constexpr Vec3& operator-=(const Vec3& o) { x -= o.x; y -= o.y; z -= o.z; return *this; }
  /// Every component times s.
  constexpr Vec3& operator*=(T s) { x *= s; y *= s; z *= s; return *this; }
  /// Every component divided by s.
  constexpr Vec3& operator/=(T s) { x /= s; y /= s; z /= s; return *this; }

  /// a + b, component-wise.
  friend constexpr Vec3 operator+(Vec3 a, const Vec3& b) { return a += b; }
  /// a - b, component-wise.
  friend constexpr Vec3 operator-(Vec3 a, const Vec3& b) { return a -= b; }
  /// -a.
  friend constexpr Vec3 operator-(const Vec3& a) { return {-a.x, -a.y, -a.z}; }
  /// a times s.
  friend constexpr Vec3 operator*(Vec3 a, T s) { return a *= s; }
  /// a times s.
  friend constexpr Vec3 operator*(T s, Vec3 a) { return a *= s; }
  /// a divided by s.
  friend constexpr Vec3 operator/(Vec3 a, T s) { return a /= s; }
  /// Equal components.
  friend constexpr bool operator==(const Vec3&, const Vec3&) = default;
};

using Vec3f = Vec3<float>;   ///< a vector of floats
using Vec3d = Vec3<double>;  ///< a vector of doubles (positions)

/// The dot product.
template <class T>
constexpr T dot(const Vec3<T>& a, const Vec3<T>& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
/// The cross product a x b.
template <class T>
constexpr Vec3<T> cross(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
/// The squared length, dot(a, a).
template <class T>
constexpr T norm2(const Vec3<T>& a) { return dot(a, a); }
/// The length, sqrt(norm2(a)).
template <class T>
T norm(const Vec3<T>& a) { return std::sqrt(norm2(a)); }
/// The component-wise minimum.
template <class T>
constexpr Vec3<T> min(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z};
}
/// The component-wise maximum.
template <class T>
constexpr Vec3<T> max(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z};
}
/// Whether every component is finite (neither infinite nor NaN). Holds under -ffast-math too
/// (grove/core/finite.hpp).
template <class T>
bool isFinite(const Vec3<T>& a) { return isFiniteValue(a.x) && isFiniteValue(a.y) && isFiniteValue(a.z); }

}  // namespace grove

// "(x, y, z)" with T's format specification applied to each component; non-finite components by
// name, whatever the translation unit's floating-point flags (grove/core/finite.hpp).
// (Left out of the API reference: Doxygen cannot place a specialisation of fmt's formatter.)
/// @cond
template <class T>
struct fmt::formatter<grove::Vec3<T>> : fmt::formatter<grove::detail::MessageFloat<T>> {
  auto format(const grove::Vec3<T>& v, fmt::format_context& ctx) const {
    using Component = fmt::formatter<grove::detail::MessageFloat<T>>;
    auto out = grove::detail::appendText(ctx.out(), "(");
    out = Component::format({v.x}, ctx);
    out = grove::detail::appendText(out, ", ");
    out = Component::format({v.y}, ctx);
    out = grove::detail::appendText(out, ", ");
    out = Component::format({v.z}, ctx);
    return grove::detail::appendText(out, ")");
  }
};
/// @endcond
