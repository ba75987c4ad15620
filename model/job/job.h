/* job/job.h - the public header of module job: what is asked: the scenario (machine, workload, parallel plan, run length), its defaults and checks, the JSON of a plan, and the memory each GPU needs.
 * Other modules include this file only (docs/architecture.md). */
#ifndef PREFLIGHT_JOB_MODULE_H
#define PREFLIGHT_JOB_MODULE_H

#include "plan.h"
#include "plan_json.h"
#include "memory.h"

#endif
