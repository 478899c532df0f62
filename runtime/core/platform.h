/// \file platform.h
/// The operating-system calls Kiln makes outside the C++ standard library, in one place: the
/// environment (the driver's shader-cache folder), the process id (unique temporary file
/// names), huge-page advice for large host buffers, and the priority of the background
/// compiler's threads. POSIX (Linux, macOS) implements each; elsewhere each is a documented
/// no-op or its nearest equivalent, so that a port changes this file and nothing else
/// (docs/runtime.md, "Portability").
#pragma once

#include <cstddef>
#include <string>

namespace kiln::platform {

/// Sets environment variable `name` to `value` unless it is set; true when this call set it.
bool set_env_if_unset(const char* name, const std::string& value);
/// Removes environment variable `name`.
void unset_env(const char* name);
/// The current process's id (0 where there is none to ask).
long process_id();
/// Advises the kernel to back [p, p + bytes) with huge pages (Linux; a no-op elsewhere).
void advise_huge_pages(void* p, size_t bytes) noexcept;
/// Lowers the calling thread's scheduling priority to the lowest (Linux: nice +19 per thread;
/// elsewhere a no-op). Returns an empty string, or why it failed.
std::string lower_thread_priority();

}  // namespace kiln::platform
