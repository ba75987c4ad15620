/* report.h - results as JSON (schema_version 1), CSV rows and text tables.
 * (Files in and out: core/file.h; Chrome/Perfetto traces: trace.c.) */
#ifndef PREFLIGHT_REPORT_H
#define PREFLIGHT_REPORT_H

#include "core/core.h"
#include "io/io.h"
#include "engine/engine.h"
#include "study/study.h"
#include <cjson/cJSON.h>
#include <stdio.h>



/* The prediction JSON of DESIGN 4.2. Caller frees with cJSON_Delete(). */
cJSON *pf_report_prediction_json(const pf_scenario *sc, const pf_prediction *p);
/* A plan that does not fit in memory is an answer, not a failure: the
 * configuration, "fits": false, the reason and the memory terms, and no time,
 * throughput or energy field (p as pf_predict left it on PF_ENOFIT).  Caller
 * frees with cJSON_Delete(). */
cJSON *pf_report_nofit_json(const pf_scenario *sc, const pf_prediction *p, const char *reason);
/* A point (of a sweep) whose plan is invalid: machine, model, nodes,
 * "valid": false and the reason.  Caller frees. */
cJSON *pf_report_invalid_json(const pf_scenario *sc, int nodes, const char *reason);
void pf_report_nofit_table(FILE *f, const pf_scenario *sc, const pf_prediction *p, const char *reason);
/* Human-readable summary. */
void pf_report_prediction_table(FILE *f, const pf_scenario *sc, const pf_prediction *p);

/* Chrome/Perfetto trace (JSON object with traceEvents) of t for scenario sc:
 * per stage a compute track, a P2P-send track and a DP-collective track, and
 * an optimizer track; X events carry name, cat, ph, ts, dur (microseconds),
 * pid, tid.  Written atomically to path.  Returns 0 or PF_EIO / PF_ENOMEM. */
int pf_trace_write(const pf_scenario *sc, const pf_trace *t, const char *path);

/* pf_resolve_predict, and when trace_path names a file (not NULL or "") the
 * iteration's trace written there (the commands that predict one
 * configuration call this). */
int pf_report_predict(pf_scenario *sc, const char *trace_path, pf_prediction *p);

#endif
