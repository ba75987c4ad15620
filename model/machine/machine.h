/* machine/machine.h - the public header of module machine: what a machine is
 * (devices, nodes, fabric, NICs, network, power, billing: hardware.h), read
 * strictly from its libconfig files (the key readers: cfgkeys.h), the network
 * kinds, one file each behind a table of functions (network.h), the device's
 * measured GEMM table (gemmtab.h) and the calibration overlay
 * (calibration.h).
 * Other modules include this file only (docs/architecture.md). */
#ifndef PREFLIGHT_MACHINE_MODULE_H
#define PREFLIGHT_MACHINE_MODULE_H

#include "hardware.h"
#include "cfgkeys.h"
#include "network.h"
#include "gemmtab.h"
#include "calibration.h"

#endif
