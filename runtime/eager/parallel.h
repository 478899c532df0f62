/// \file parallel.h
/// Private to runtime/eager: splits a loop of independent iterations over the machine's cores,
/// for the interpreter's large elementwise and row-wise kernels. The calling thread and a fixed
/// set of workers (one fewer than the cores, or KILN_CPU_THREADS - 1) claim ranges from a shared
/// counter until none is left, so a worker whose core is busy elsewhere delays nothing: the
/// caller runs its ranges. Results do not depend on the split: every iteration is computed the
/// same way whichever thread runs it.
#pragma once

#include <cstdint>
#include <functional>

namespace kiln::eager {

/// Threads a parallel_for may use, the caller included (at least 1).
int cpu_threads();

/// Calls fn(begin, end) on disjoint ranges covering [0, n), each of at least `grain` iterations,
/// up to 4 per thread (one range, on the calling thread, when n < 2 * grain or there is one
/// thread). Returns when
/// every range is done. `fn` must not throw. Safe to call from several threads at once and from
/// inside `fn` (a nested call runs on its own thread).
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace kiln::eager
