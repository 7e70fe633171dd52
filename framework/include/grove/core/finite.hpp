#pragma once
/// @file
/// Finite and NaN tests, and the formatting of non-finite values, that hold under -ffast-math.
/// With -ffinite-math-only (part of -ffast-math, which many simulation codes compile with) the
/// compiler assumes no value is NaN or infinite: std::isfinite folds to true, and fmt, compiled
/// into the same translation unit, takes a NaN for a finite number and fails an assertion while
/// formatting it. Grove's checks of user input and its messages about the values they find run in
/// the user's translation units, with the user's flags, so they look at the bits instead: the
/// compiler does not reason about integer bit patterns.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

namespace grove {

/// Whether x is neither infinite nor NaN, read from its bits (holds under -ffast-math).
constexpr bool isFiniteValue(double x) {
  constexpr std::uint64_t kExponent = 0x7ff0000000000000ull;
  return (std::bit_cast<std::uint64_t>(x) & kExponent) != kExponent;
}
/// Whether x is neither infinite nor NaN, read from its bits (holds under -ffast-math).
constexpr bool isFiniteValue(float x) {
  constexpr std::uint32_t kExponent = 0x7f800000u;
  return (std::bit_cast<std::uint32_t>(x) & kExponent) != kExponent;
}
/// Whether x is a NaN (either sign), read from its bits (holds under -ffast-math).
constexpr bool isNanValue(double x) {
  return !isFiniteValue(x) && (std::bit_cast<std::uint64_t>(x) & 0x000fffffffffffffull) != 0;
}
/// Whether x is a NaN (either sign), read from its bits (holds under -ffast-math).
constexpr bool isNanValue(float x) { return !isFiniteValue(x) && (std::bit_cast<std::uint32_t>(x) & 0x007fffffu) != 0; }
/// Whether x's sign bit is set (true for -0.0 and negative NaNs too).
constexpr bool signBit(double x) { return (std::bit_cast<std::uint64_t>(x) >> 63) != 0; }
/// Whether x's sign bit is set (true for -0.0f and negative NaNs too).
constexpr bool signBit(float x) { return (std::bit_cast<std::uint32_t>(x) >> 31) != 0; }

/// "nan", "-nan", "inf" or "-inf", as fmt writes them. Needs: x not finite (a finite x gets
/// "inf" or "-inf").
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
// Appends text to a formatter's output. Grove's formatters write their literal parts so, not
// through fmt::format_to, whose argument visitors (with a long double branch) nvcc would compile
// for the device under --expt-relaxed-constexpr and warn about (#20208-D) in every .cu that
// formats a grove type.
template <class Out>
Out appendText(Out out, std::string_view text) {
  return std::copy(text.begin(), text.end(), out);
}
// One finite value written under fmt's format specification spec (the text between "{:" and
// "}", e.g. ".3e"; empty: fmt's default). Compiled into grove (src/core/finite.cpp), see the
// formatter below for why.
std::string formatFiniteFloat(double value, std::string_view spec);
std::string formatFiniteFloat(float value, std::string_view spec);
template <class T>
MessageArg<T> messageArg(const T& x) {
  if constexpr (std::is_floating_point_v<T>) return MessageFloat<T>{x};
  else return x;
}
}  // namespace detail

}  // namespace grove

// Takes fmt's format specification for T ({:.3e}, {:>8}, ...); a non-finite value is written by
// name (without the width) before fmt's own code can see it. fmt's parser checks the
// specification (at compile time, with the format string); the digits are written by
// formatFiniteFloat in grove's compiled library, not here: fmt 9's float writer, instantiated in
// the user's translation unit through a formatter that calls formatter<double>::format, makes
// GCC 13 warn (-Wstringop-overflow in fmt's bigint) in every file that reports a double through
// grove::require, and nvcc warn about long double (#20208-D).
// (Left out of the API reference: Doxygen cannot place a specialisation of fmt's formatter.)
/// @cond
template <class T>
struct fmt::formatter<grove::detail::MessageFloat<T>> {
  constexpr auto parse(fmt::format_parse_context& ctx) {
    const char* begin = ctx.begin();
    const auto end = checker_.parse(ctx);
    spec_ = std::string_view(begin, static_cast<std::size_t>(end - begin));
    return end;
  }
  auto format(grove::detail::MessageFloat<T> v, fmt::format_context& ctx) const {
    if (!grove::isFiniteValue(v.value)) return grove::detail::appendText(ctx.out(), grove::nonFiniteName(v.value));
    return grove::detail::appendText(ctx.out(), grove::detail::formatFiniteFloat(v.value, spec_));
  }

 private:
  fmt::formatter<T> checker_;  // parses (and so checks) the specification; never formats
  std::string_view spec_;      // the specification's text, inside the format string
};
/// @endcond
