/* workload/workload.h - the public header of module workload: what is
 * trained (spec.h: built-in transformers, CNNs and layer lists, parameters and
 * FLOPs), the kernels a training step launches, described but not priced
 * (kernels.h), and layer lists (layers.h).
 * Other modules include this file only (docs/architecture.md). */
#ifndef PREFLIGHT_WORKLOAD_MODULE_H
#define PREFLIGHT_WORKLOAD_MODULE_H

#include "spec.h"
#include "kernels.h"
#include "layers.h"

#endif
