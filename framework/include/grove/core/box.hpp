#pragma once
/// @file
/// grove::Box<T>, the half-open axis-aligned box of domains and tree cells.
#include <limits>

#include "grove/core/vec3.hpp"

namespace grove {

/// An axis-aligned box, half-open: a point p is inside when low <= p < high on every axis.
/// Half-open boxes tile space without overlap, so every position has exactly one owner.
/// Infinite faces are allowed (the outer faces of an open root domain).
template <std::floating_point T>
struct Box {
  Vec3<T> low{};   ///< lower corner (inclusive)
  Vec3<T> high{};  ///< upper corner (exclusive)

  /// The empty box: low = +inf, high = -inf, so merging anything into it gives that thing.
  static constexpr Box empty() {
    constexpr T inf = std::numeric_limits<T>::infinity();
    return {Vec3<T>(inf), Vec3<T>(-inf)};
  }
  /// All of space: low = -inf, high = +inf.
  static constexpr Box everything() {
    constexpr T inf = std::numeric_limits<T>::infinity();
    return {Vec3<T>(-inf), Vec3<T>(inf)};
  }

  /// Whether p is inside the half-open box (low <= p < high on every axis).
  constexpr bool contains(const Vec3<T>& p) const {
    return low.x <= p.x && p.x < high.x && low.y <= p.y && p.y < high.y && low.z <= p.z && p.z < high.z;
  }
  /// FDPS's name for contains() (F64ort::contained): FDPS programs call it on the boxes
  /// DomainInfo returns, which are Boxes here.
  constexpr bool contained(const Vec3<T>& p) const { return contains(p); }
  /// Closed-box test (low <= p <= high on every axis): for bounding boxes of points, where the
  /// maximum itself belongs.
  constexpr bool containsClosed(const Vec3<T>& p) const {
    return low.x <= p.x && p.x <= high.x && low.y <= p.y && p.y <= high.y && low.z <= p.z && p.z <= high.z;
  }
  /// Whether low > high on some axis (or a face is NaN), as for empty().
  constexpr bool isEmpty() const { return !(low.x <= high.x && low.y <= high.y && low.z <= high.z); }
  /// high - low on each axis.
  constexpr Vec3<T> size() const { return high - low; }
  /// The midpoint (low + high) / 2.
  constexpr Vec3<T> center() const { return (low + high) * T(0.5); }
  /// Grows the box to the smallest one holding it and the point p (closed on the high side).
  constexpr void merge(const Vec3<T>& p) { low = min(low, p); high = max(high, p); }
  /// Grows the box to the smallest one holding it and b.
  constexpr void merge(const Box& b) { low = min(low, b.low); high = max(high, b.high); }
  /// Equal corners.
  friend constexpr bool operator==(const Box&, const Box&) = default;
};

using Boxf = Box<float>;   ///< a box of floats
using Boxd = Box<double>;  ///< a box of doubles (domains, tree cells)

}  // namespace grove

// (Left out of the API reference: Doxygen cannot place a specialisation of fmt's formatter.)
/// @cond
template <class T>
struct fmt::formatter<grove::Box<T>> : fmt::formatter<grove::Vec3<T>> {
  auto format(const grove::Box<T>& b, fmt::format_context& ctx) const {
    auto out = grove::detail::appendText(ctx.out(), "[");
    out = fmt::formatter<grove::Vec3<T>>::format(b.low, ctx);
    out = grove::detail::appendText(out, ", ");
    out = fmt::formatter<grove::Vec3<T>>::format(b.high, ctx);
    return grove::detail::appendText(out, ")");
  }
};
/// @endcond
