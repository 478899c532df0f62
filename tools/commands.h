/// \file commands.h
/// Entry points of the kiln CLI's subcommands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

int kiln_devices_main();

namespace kiln::tools {

/// `kiln demo --chain`: the fused elementwise chain relu((x*a+b)*c-d).
struct ChainOptions {
  int64_t rows = 1024;
  int64_t cols = 4096;
  int iters = 10;
};
int chain_main(const ChainOptions& options);

/// `kiln demo`: the seed's text-encoder benchmark (docs/demo.md).
struct DemoOptions {
  bool small = false;  // the quick configuration (CI)
  bool json = false;   // one JSON document on stdout instead of tables
  std::vector<std::string> strategies = {"static", "dynamic", "auto", "warm-up"};
  std::vector<int64_t> lengths;  // empty: the configuration's lengths
  int repeat = 3;                // steady-state calls per length (median reported)
  std::string device = "vulkan";
};
int demo_main(const DemoOptions& options);

}  // namespace kiln::tools
