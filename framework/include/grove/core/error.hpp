#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace grove {

namespace detail {
// The calling process's rank in the world communicator, or 0 before the runtime starts.
int worldRankForMessages() noexcept;
}  // namespace detail

// A fatal condition in grove: bad input or a broken invariant. The message names the rank,
// the stage that found it and the offending value. grove::Runtime turns an uncaught Error on
// any rank into a clean abort of all ranks.
class Error : public std::runtime_error {
 public:
  Error(std::string_view stage, std::string_view message)
      : std::runtime_error(fmt::format("grove error on rank {} in {}: {}", detail::worldRankForMessages(),
                                       stage, message)),
        stage_(stage) {}
  const std::string& stage() const noexcept { return stage_; }

 private:
  std::string stage_;
};

// Throws grove::Error(stage, formatted message) when a condition does not hold.
template <class... Args>
void require(bool condition, std::string_view stage, fmt::format_string<Args...> format, Args&&... args) {
  if (!condition) throw Error(stage, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace grove
