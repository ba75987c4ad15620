/* core/core.h - the public header of module core: the base every module stands on: error codes and messages, unit-strict quantities, the typed option table, checked arithmetic, the FNV-1a content hash, shared statistics (median, error summaries, scaling efficiency), files read with limits and outputs replaced atomically, signals, the progress bar and the worker processes, and where the program and its shipped data are.
 * Other modules include this file only (docs/architecture.md). */
#ifndef PREFLIGHT_CORE_MODULE_H
#define PREFLIGHT_CORE_MODULE_H

#include "error.h"
#include "units.h"
#include "bounds.h"
#include "opts.h"
#include "checked.h"
#include "hash.h"
#include "stats.h"
#include "file.h"
#include "interrupt.h"
#include "progress.h"
#include "workers.h"
#include "datadir.h"

#endif
