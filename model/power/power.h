/* power/power.h - the public header of module power: energy of a window at
 * every metering scope, the power cap and the clock it leaves (energy.h),
 * and the power models behind a table of functions that say what a used
 * device draws while its kernels run (pmodel.h).
 * Other modules include this file only (docs/architecture.md). */
#ifndef PREFLIGHT_POWER_MODULE_H
#define PREFLIGHT_POWER_MODULE_H

#include "energy.h"
#include "pmodel.h"

#endif
