#pragma once
/// @file
/// The user-type contracts of the force trees (FDPS 7.1 member names), as concepts. The trees
/// check them with one static_assert per member, so a missing member reads as one line:
///   "grove: the EPJ type needs `getCharge() const` (long-range trees)".
#include <concepts>

#include "grove/core/particle_traits.hpp"

namespace grove {

/// FP has `copyFromForce(const Force&)`: the write-back of a force into the full particle.
template <class FP, class Force>
concept HasCopyFromForce = requires(FP& fp, const Force& f) { fp.copyFromForce(f); };

/// EP (an EPI or EPJ type) has `copyFromFP(const FP&)`: how the tree loads it from a full particle.
template <class EP, class FP>
concept HasCopyFromFP = requires(EP& ep, const FP& fp) { ep.copyFromFP(fp); };

/// P has `getCharge() const`, convertible to double.
template <class P>
concept HasGetCharge = requires(const P& p) {
  { p.getCharge() } -> std::convertible_to<double>;
};

/// F has `clear()` (a Force type: reset before accumulation).
template <class F>
concept HasClear = requires(F& f) { f.clear(); };

/// Contracts on the tree's own types (EPI, EPJ, Force), checked at compile time where the tree
/// type is named: positions, the EPJ's charge, Force::clear(), a trivially copyable EPJ. True when
/// every contract holds; each failing one fails compilation with its own static_assert message.
template <class Force, class EPI, class EPJ>
consteval bool checkLongRangeTypeContracts() {
  static_assert(HasGetPos<EPI>, "grove: the EPI type needs `getPos() const` returning a 3-vector");
  static_assert(HasGetPos<EPJ>, "grove: the EPJ type needs `getPos() const` returning a 3-vector");
  static_assert(HasGetCharge<EPJ>, "grove: the EPJ type needs `getCharge() const` (long-range trees)");
  static_assert(HasClear<Force>, "grove: the Force type needs `clear()`");
  static_assert(std::is_trivially_copyable_v<EPJ>, "grove: the EPJ type must be trivially copyable (it travels in LETs)");
  return HasGetPos<EPI> && HasGetPos<EPJ> && HasGetCharge<EPJ> && HasClear<Force> && std::is_trivially_copyable_v<EPJ>;
}

/// Contracts that involve the full particle, checked where a force calculation is called. True
/// when every contract holds; each failing one has produced its own message (once). The value
/// also includes the contracts of checkLongRangeTypeContracts().
template <class FP, class Force, class EPI, class EPJ>
consteval bool checkLongRangeContracts() {
  static_assert(HasGetPos<FP>, "grove: the FP (full particle) type needs `getPos() const` returning a 3-vector");
  static_assert(HasCopyFromForce<FP, Force>, "grove: the FP (full particle) type needs `copyFromForce(const Force&)`");
  static_assert(HasCopyFromFP<EPI, FP>, "grove: the EPI type needs `copyFromFP(const FP&)`");
  static_assert(HasCopyFromFP<EPJ, FP>, "grove: the EPJ type needs `copyFromFP(const FP&)`");
  return HasGetPos<FP> && HasCopyFromForce<FP, Force> && HasCopyFromFP<EPI, FP> && HasCopyFromFP<EPJ, FP> &&
         HasGetPos<EPI> && HasGetPos<EPJ> && HasGetCharge<EPJ> && HasClear<Force> && std::is_trivially_copyable_v<EPJ>;
}

}  // namespace grove
