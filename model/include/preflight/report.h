/* report.h - results as JSON (schema_version 1), CSV rows and text tables.
 * (Files in and out: io.h; Chrome/Perfetto traces: trace.c.) */
#ifndef PREFLIGHT_REPORT_H
#define PREFLIGHT_REPORT_H

#include "preflight/io.h"
#include "preflight/pipeline.h"
#include "preflight/predict.h"
#include <cjson/cJSON.h>
#include <stdio.h>

#define PF_SCHEMA_VERSION 1

/* A result document's root: {"schema_version": 1, "tool": {...}}; caller frees. */
cJSON *pf_report_root_json(void);
/* Pretty-printed doc plus a newline, as a string (caller frees; NULL when out
 * of memory), or printed to f; both delete doc. */
char *pf_report_json_text(cJSON *doc);
void pf_report_json_print(FILE *f, cJSON *doc);

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
/* {"version":..., "git":...}; caller frees. */
cJSON *pf_report_tool_json(void);
/* Human-readable summary. */
void pf_report_prediction_table(FILE *f, const pf_scenario *sc, const pf_prediction *p);

const char *pf_version(void);
const char *pf_git(void);

#endif
