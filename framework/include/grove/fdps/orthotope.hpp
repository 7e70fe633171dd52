#pragma once
/// @file
/// FDPS 7.1's Orthotope3 (PS::F64ort): an axis-aligned box with FDPS's member names, convertible to
/// and from grove::Box. Part of grove/fdps.hpp.
#include <algorithm>
#include <concepts>
#include <ostream>

#include "grove/core/box.hpp"
#include "grove/fdps/vectors.hpp"

namespace grove::fdps {

// ---- Orthotope3: FDPS's axis-aligned box value type ---------------------------------------------------
/// FDPS's axis-aligned box: FDPS's members (low_, high_, merge, overlapped, getCenter, ...),
/// convertible to and from grove::Box, so a box from grove (DomainInfo::getPosDomain) can be held
/// as a PS::F64ort. Containment of a point is half-open (low_ <= p < high_), overlap of two boxes
/// closed, as in FDPS. Nothing is checked: a box with low_ > high_ on an axis is empty there.
template <std::floating_point T>
class Orthotope3 {
 public:
  Vec3<T> low_;   ///< The lower corner.
  Vec3<T> high_;  ///< The upper corner.

  /// A box of negative volume (initNegativeVolume()): merging anything into it gives that thing.
  Orthotope3() { init(); }
  /// The box from low to high (taken as given, not reordered).
  Orthotope3(const Vec3<T>& low, const Vec3<T>& high) : low_(low), high_(high) {}
  /// The cube of half-width `half_length` around center.
  Orthotope3(const Vec3<T>& center, T half_length)
      : low_(center - Vec3<T>(half_length)), high_(center + Vec3<T>(half_length)) {}
  /// Implicit from grove::Box of the same precision (low, high).
  Orthotope3(const Box<T>& box) : low_(box.low), high_(box.high) {}
  /// Implicit from a box of the other precision; the corners are converted.
  template <std::floating_point U>
    requires(!std::same_as<U, T>)
  Orthotope3(const Orthotope3<U>& o) : low_(static_cast<Vec3<T>>(o.low_)), high_(static_cast<Vec3<T>>(o.high_)) {}
  /// Implicit from a grove::Box of the other precision; the corners are converted.
  template <std::floating_point U>
    requires(!std::same_as<U, T>)
  Orthotope3(const Box<U>& b) : low_(static_cast<Vec3<T>>(b.low)), high_(static_cast<Vec3<T>>(b.high)) {}

  /// Implicit to grove::Box: low_ and high_ become low and high.
  operator Box<T>() const { return {low_, high_}; }

  /// Makes the box empty with negative volume: low_ = FLT_MAX / 128 on every axis, high_ = -low_.
  void initNegativeVolume() {
    low_ = Vec3<T>(static_cast<T>(std::numeric_limits<float>::max() / 128));
    high_ = -low_;
  }
  /// Same as initNegativeVolume().
  void init() { initNegativeVolume(); }

  /// The box moved by v.
  Orthotope3 shift(const Vec3<T>& v) const { return {low_ + v, high_ + v}; }

  /// Grows the box to the smallest one containing both it and o.
  void merge(const Orthotope3& o) {
    low_ = min(low_, o.low_);
    high_ = max(high_, o.high_);
  }
  /// Grows the box to the smallest one containing both it and the point p.
  void merge(const Vec3<T>& p) {
    low_ = min(low_, p);
    high_ = max(high_, p);
  }
  /// Merges the cube of half-width `size` around p.
  void merge(const Vec3<T>& p, T size) {
    low_ = min(low_, p - Vec3<T>(size));
    high_ = max(high_, p + Vec3<T>(size));
  }

  /// True when the two boxes share no point (closed boxes: touching faces overlap).
  bool notOverlapped(const Orthotope3& a) const {
    return a.high_.x < low_.x || high_.x < a.low_.x || a.high_.y < low_.y || high_.y < a.low_.y ||
           a.high_.z < low_.z || high_.z < a.low_.z;
  }
  /// True when the two closed boxes share a point: !notOverlapped(a).
  bool overlapped(const Orthotope3& a) const { return !notOverlapped(a); }
  /// True when p lies outside the half-open box (p < low_ or p >= high_ on some axis).
  bool notOverlapped(const Vec3<T>& p) const {
    return p.x < low_.x || high_.x <= p.x || p.y < low_.y || high_.y <= p.y || p.z < low_.z || high_.z <= p.z;
  }
  /// True when p lies in the half-open box (low_ <= p < high_ on every axis).
  bool overlapped(const Vec3<T>& p) const { return !notOverlapped(p); }
  /// FDPS's newer name for a point inside the box (low_ <= p < high_).
  bool contained(const Vec3<T>& p) const { return !notOverlapped(p); }
  /// True when a is not wholly inside this box (closed comparison).
  bool notContains(const Orthotope3& a) const {
    return a.low_.x < low_.x || high_.x < a.high_.x || a.low_.y < low_.y || high_.y < a.high_.y ||
           a.low_.z < low_.z || high_.z < a.high_.z;
  }
  /// True when a lies wholly inside this box (low_ <= a.low_ and a.high_ <= high_ on every axis).
  bool contains(const Orthotope3& a) const { return !notContains(a); }

  /// The centre, (low_ + high_) / 2.
  Vec3<T> getCenter() const { return (high_ + low_) * T(0.5); }
  /// Half the edge lengths, (high_ - low_) / 2.
  Vec3<T> getHalfLength() const { return (high_ - low_) * T(0.5); }
  /// The edge lengths, high_ - low_.
  Vec3<T> getFullLength() const { return high_ - low_; }

  /// Squared distance between the nearest points of two boxes (0 when they overlap).
  T getDistanceMinSQ(const Orthotope3& o) const {
    auto gap = [](T lo_a, T hi_a, T lo_b, T hi_b) -> T {
      if (hi_b < lo_a) return lo_a - hi_b;
      if (hi_a < lo_b) return lo_b - hi_a;
      return T(0);
    };
    const T dx = gap(low_.x, high_.x, o.low_.x, o.high_.x), dy = gap(low_.y, high_.y, o.low_.y, o.high_.y),
            dz = gap(low_.z, high_.z, o.low_.z, o.high_.z);
    return dx * dx + dy * dy + dz * dz;
  }
  /// Squared distance from a point to the box (0 inside or on its boundary).
  T getDistanceMinSQ(const Vec3<T>& p) const {
    auto gap = [](T v, T lo, T hi) -> T { return v > hi ? v - hi : (v < lo ? lo - v : T(0)); };
    const T dx = gap(p.x, low_.x, high_.x), dy = gap(p.y, low_.y, high_.y), dz = gap(p.z, low_.z, high_.z);
    return dx * dx + dy * dy + dz * dz;
  }

  /// Writes low_, then high_, with the stream's precision set to 15 digits (it stays set).
  friend std::ostream& operator<<(std::ostream& os, const Orthotope3& o) {
    return os << std::setprecision(15) << o.low_ << "   " << o.high_;
  }
};

using F32ort = Orthotope3<F32>;  ///< FDPS's single-precision box.
using F64ort = Orthotope3<F64>;  ///< FDPS's double-precision box.
using F32ort3 = F32ort;  ///< FDPS's 3-D spelling of F32ort.
using F64ort3 = F64ort;  ///< FDPS's 3-D spelling of F64ort.

}  // namespace grove::fdps
