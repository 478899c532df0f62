// The operating-system calls of platform.h: POSIX where it exists, no-ops elsewhere.
#include "core/platform.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#define KILN_POSIX 1
#endif
#if defined(_WIN32)
#include <process.h>
#endif

namespace kiln::platform {

bool set_env_if_unset(const char* name, const std::string& value) {
#if KILN_POSIX
  if (std::getenv(name) != nullptr) return false;
  return ::setenv(name, value.c_str(), 0) == 0;
#elif defined(_WIN32)
  if (std::getenv(name) != nullptr) return false;
  return ::_putenv_s(name, value.c_str()) == 0;
#else
  (void)name;
  (void)value;
  return false;
#endif
}

void unset_env(const char* name) {
#if KILN_POSIX
  ::unsetenv(name);
#elif defined(_WIN32)
  ::_putenv_s(name, "");
#else
  (void)name;
#endif
}

long process_id() {
#if KILN_POSIX
  return static_cast<long>(::getpid());
#elif defined(_WIN32)
  return static_cast<long>(::_getpid());
#else
  return 0;
#endif
}

void advise_huge_pages(void* p, size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)::madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

std::string lower_thread_priority() {
#if defined(__linux__)
  // Linux applies a thread id's nice value to that thread alone.
  constexpr int kNice = 19;
  errno = 0;
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kNice) != 0 && errno != 0)
    return std::strerror(errno);
  return "";
#else
  return "";
#endif
}

}  // namespace kiln::platform
