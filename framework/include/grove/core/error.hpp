#pragma once
/// @file
/// grove::Error, the exception of every fatal condition, and grove::require, which throws it.
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "grove/core/finite.hpp"

namespace grove {

namespace detail {
// The calling process's rank in the world communicator, or 0 before the runtime starts.
int worldRankForMessages() noexcept;
}  // namespace detail

/// A fatal condition in grove: bad input or a broken invariant. The message names the rank,
/// the stage that found it and the offending value. grove::Runtime turns an uncaught Error on
/// any rank into a clean abort of all ranks.
class Error : public std::runtime_error {
 public:
  /// what() is "grove error on rank R in STAGE: MESSAGE" (R: the world rank, 0 before the
  /// Runtime starts).
  Error(std::string_view stage, std::string_view message)
      : std::runtime_error(fmt::format("grove error on rank {} in {}: {}", detail::worldRankForMessages(),
                                       stage, message)),
        stage_(stage),
        message_(message) {}
  /// The stage that found the condition, e.g. "exchangeParticle".
  const std::string& stage() const noexcept { return stage_; }
  /// The message alone, without the rank and the stage (to wrap it in another stage's error).
  const std::string& message() const noexcept { return message_; }

 private:
  std::string stage_;
  std::string message_;
};

/// A message with fmt's format string, in which floating-point arguments that are not finite are
/// written by name even under -ffast-math (grove/core/finite.hpp). For every message about values
/// a user handed in.
template <class... Args>
std::string formatMessage(fmt::format_string<detail::MessageArg<Args>...> format, Args&&... args) {
  return fmt::format(format, detail::messageArg(args)...);
}

/// Throws grove::Error(stage, formatted message) when condition is false; does nothing (and
/// formats nothing) when it holds. Non-finite floating-point arguments are written by name, as
/// in formatMessage().
template <class... Args>
void require(bool condition, std::string_view stage, fmt::format_string<detail::MessageArg<Args>...> format,
             Args&&... args) {
  if (!condition) throw Error(stage, fmt::format(format, detail::messageArg(args)...));
}

}  // namespace grove
