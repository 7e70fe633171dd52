// The digits of grove's messages about floating-point values (grove/core/finite.hpp): written
// here, in the compiled library, so that fmt's float writer is not instantiated in every user
// translation unit that includes grove's headers (GCC 13 warns inside it; nvcc warns about its
// long double branch).
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "grove/core/finite.hpp"

namespace grove::detail {

namespace {
template <class T>
std::string formatWithSpec(T value, std::string_view spec) {
  std::string format;
  format.reserve(spec.size() + 3);
  format.append("{:").append(spec).append("}");
  return fmt::format(fmt::runtime(format), value);
}
}  // namespace

std::string formatFiniteFloat(double value, std::string_view spec) { return formatWithSpec(value, spec); }
std::string formatFiniteFloat(float value, std::string_view spec) { return formatWithSpec(value, spec); }

}  // namespace grove::detail
