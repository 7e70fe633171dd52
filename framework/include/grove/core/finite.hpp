#pragma once
// Finite and NaN tests, and the formatting of non-finite values, that hold under -ffast-math.
// With -ffinite-math-only (part of -ffast-math, which many simulation codes compile with) the
// compiler assumes no value is NaN or infinite: std::isfinite folds to true, and fmt, compiled
// into the same translation unit, takes a NaN for a finite number and fails an assertion while
// formatting it. Grove's checks of user input and its messages about the values they find run in
// the user's translation units, with the user's flags, so they look at the bits instead: the
// compiler does not reason about integer bit patterns.
#include <bit>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

namespace grove {

constexpr bool isFiniteValue(double x) {
  constexpr std::uint64_t kExponent = 0x7ff0000000000000ull;
  return (std::bit_cast<std::uint64_t>(x) & kExponent) != kExponent;
}
constexpr bool isFiniteValue(float x) {
  constexpr std::uint32_t kExponent = 0x7f800000u;
  return (std::bit_cast<std::uint32_t>(x) & kExponent) != kExponent;
}
constexpr bool isNanValue(double x) {
  return !isFiniteValue(x) && (std::bit_cast<std::uint64_t>(x) & 0x000fffffffffffffull) != 0;
}
constexpr bool isNanValue(float x) { return !isFiniteValue(x) && (std::bit_cast<std::uint32_t>(x) & 0x007fffffu) != 0; }
constexpr bool signBit(double x) { return (std::bit_cast<std::uint64_t>(x) >> 63) != 0; }
constexpr bool signBit(float x) { return (std::bit_cast<std::uint32_t>(x) >> 31) != 0; }

// "nan", "-nan", "inf" or "-inf", as fmt writes them; only for a value that is not finite.
template <class T>
  requires std::is_floating_point_v<T>
constexpr std::string_view nonFiniteName(T x) {
  if (isNanValue(x)) return signBit(x) ? "-nan" : "nan";
  return signBit(x) ? "-inf" : "inf";
}

namespace detail {
// A floating-point value in a message: formatted as fmt formats it when finite, by name when not
// (see the formatter below), whatever the floating-point flags of the translation unit.
template <class T>
struct MessageFloat {
  T value;
};
// What a message argument is formatted as: floating-point values through MessageFloat.
template <class T>
using MessageArg = std::conditional_t<std::is_floating_point_v<std::remove_cvref_t<T>>,
                                      MessageFloat<std::remove_cvref_t<T>>, const std::remove_cvref_t<T>&>;
template <class T>
MessageArg<T> messageArg(const T& x) {
  if constexpr (std::is_floating_point_v<T>) return MessageFloat<T>{x};
  else return x;
}
}  // namespace detail

}  // namespace grove

// Takes fmt's format specification for T ({:.3e}, {:>8}, ...); a non-finite value is written by
// name (without the width) before fmt's own code can see it.
template <class T>
struct fmt::formatter<grove::detail::MessageFloat<T>> : fmt::formatter<T> {
  auto format(grove::detail::MessageFloat<T> v, fmt::format_context& ctx) const {
    if (!grove::isFiniteValue(v.value)) return fmt::format_to(ctx.out(), "{}", grove::nonFiniteName(v.value));
    return fmt::formatter<T>::format(v.value, ctx);
  }
};
