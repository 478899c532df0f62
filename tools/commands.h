/// \file commands.h
/// Entry points of the kiln CLI's subcommands.
#pragma once

#include <cstdint>

int kiln_devices_main();

namespace kiln::tools {

struct DemoOptions {
  int64_t rows = 1024;
  int64_t cols = 4096;
  int iters = 10;
};
int demo_main(const DemoOptions& options);

}  // namespace kiln::tools
