// expect_error: a call that must throw kiln::Error whose message names every given part.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::test {

/// Runs `fn`; fails unless it throws an Error whose message contains each of `parts`.
template <typename Fn>
void expect_error(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\nmissing: " << p;
  }
}

}  // namespace kiln::test
