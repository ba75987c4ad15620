/* study/study.h - the public header of module study: loops over predictions: one prediction, many over all cores, the tuner, validation against measured runs, the fit and the allocation budget.
 * Other modules include this file only (docs/architecture.md). */
#ifndef PREFLIGHT_STUDY_MODULE_H
#define PREFLIGHT_STUDY_MODULE_H

#include "predict.h"
#include "batch.h"
#include "tune.h"
#include "validate.h"
#include "budget.h"
#include "interval.h"
#include "collval.h"

#endif
