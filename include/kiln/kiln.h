/// \file kiln.h
/// Umbrella header: everything an application needs.
#pragma once

#include "kiln/compile.h"
#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/fft.h"
#include "kiln/io.h"
#include "kiln/logging.h"
#include "kiln/nn.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
