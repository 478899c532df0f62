// kiln: the command-line tool.
#include <CLI/CLI.hpp>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: compile tensor programs into fused Vulkan compute shaders"};
  app.require_subcommand(1);

  app.add_subcommand("devices", "List Vulkan devices and their compute limits and features");

  kiln::tools::DemoOptions demo;
  auto* demo_cmd = app.add_subcommand(
      "demo", "Compile and run a fused program on the default device; compare with unfused");
  demo_cmd->add_option("--rows", demo.rows, "Rows of x")->check(CLI::PositiveNumber);
  demo_cmd->add_option("--cols", demo.cols, "Columns of x (and length of a, b, c, d)")
      ->check(CLI::PositiveNumber);
  demo_cmd->add_option("--iters", demo.iters, "Timed iterations per variant")
      ->check(CLI::PositiveNumber);

  CLI11_PARSE(app, argc, argv);
  if (app.got_subcommand("devices")) return kiln_devices_main();
  if (app.got_subcommand("demo")) return kiln::tools::demo_main(demo);
  return 1;
}
