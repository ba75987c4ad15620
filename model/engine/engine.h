/* engine/engine.h - the public header of module engine: one iteration in time: the representative pipeline (SimGrid DES or closed form), the data-parallel synchronisation, and every GPU in SimGrid (--engine full).
 * Other modules include this file only (docs/architecture.md). */
#ifndef PREFLIGHT_ENGINE_MODULE_H
#define PREFLIGHT_ENGINE_MODULE_H

#include "pipeline.h"
#include "dpsync.h"
#include "fullsim.h"

#endif
