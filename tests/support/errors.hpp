#pragma once
// What a call threw, for tests that compare error messages across ranks.
#include <string>

#include "grove/core/error.hpp"

namespace grove::testing_support {

// The message of the grove::Error that call() threw, or empty if it returned.
std::string errorOf(auto&& call) {
  try {
    call();
  } catch (const grove::Error& e) {
    return e.what();
  }
  return {};
}

}  // namespace grove::testing_support
