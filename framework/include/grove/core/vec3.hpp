#pragma once
#include <cmath>
#include <concepts>
#include <cstddef>
#include <fmt/format.h>

#include "grove/core/finite.hpp"

namespace grove {

// A 3-vector of float or double. Aggregate, trivially copyable, so it travels through
// grove::Comm and into device buffers as plain bytes.
template <std::floating_point T>
struct Vec3 {
  T x{}, y{}, z{};

  constexpr Vec3() = default;
  constexpr Vec3(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
  // Implicit, as FDPS's vectors: FDPS programs write `F64vec acc = 0.0;` and `acc = 0;`.
  constexpr Vec3(T s) : x(s), y(s), z(s) {}
  // Implicit both ways, as FDPS's Vector3 (FDPS programs write `F32vec f = pos64;`). Arithmetic
  // mixing float and double vectors stays ambiguous, hence a compile error, in grove's own
  // headers; grove/fdps.hpp adds FDPS's mixed forms (the left operand's precision).
  template <std::floating_point U>
    requires(!std::same_as<U, T>)
  constexpr Vec3(const Vec3<U>& o)
      : x(static_cast<T>(o.x)), y(static_cast<T>(o.y)), z(static_cast<T>(o.z)) {}

  constexpr T& operator[](std::size_t i) { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr const T& operator[](std::size_t i) const { return i == 0 ? x : (i == 1 ? y : z); }

  constexpr Vec3& operator+=(const Vec3& o) { x += o.x; y += o.y; z += o.z; return *this; }
  constexpr Vec3& operator-=(const Vec3& o) { x -= o.x; y -= o.y; z -= o.z; return *this; }
  constexpr Vec3& operator*=(T s) { x *= s; y *= s; z *= s; return *this; }
  constexpr Vec3& operator/=(T s) { x /= s; y /= s; z /= s; return *this; }

  friend constexpr Vec3 operator+(Vec3 a, const Vec3& b) { return a += b; }
  friend constexpr Vec3 operator-(Vec3 a, const Vec3& b) { return a -= b; }
  friend constexpr Vec3 operator-(const Vec3& a) { return {-a.x, -a.y, -a.z}; }
  friend constexpr Vec3 operator*(Vec3 a, T s) { return a *= s; }
  friend constexpr Vec3 operator*(T s, Vec3 a) { return a *= s; }
  friend constexpr Vec3 operator/(Vec3 a, T s) { return a /= s; }
  friend constexpr bool operator==(const Vec3&, const Vec3&) = default;
};

using Vec3f = Vec3<float>;
using Vec3d = Vec3<double>;

template <class T>
constexpr T dot(const Vec3<T>& a, const Vec3<T>& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <class T>
constexpr Vec3<T> cross(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <class T>
constexpr T norm2(const Vec3<T>& a) { return dot(a, a); }
template <class T>
T norm(const Vec3<T>& a) { return std::sqrt(norm2(a)); }
template <class T>
constexpr Vec3<T> min(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z};
}
template <class T>
constexpr Vec3<T> max(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z};
}
// Holds under -ffast-math too (grove/core/finite.hpp).
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
