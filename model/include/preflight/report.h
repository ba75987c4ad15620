/* report.h - results as JSON (schema_version 1), CSV rows and text tables;
 * atomic file output.  (Chrome/Perfetto traces: trace.c.) */
#ifndef PREFLIGHT_REPORT_H
#define PREFLIGHT_REPORT_H

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
/* {"version":..., "git":...}; caller frees. */
cJSON *pf_report_tool_json(void);
/* Human-readable summary. */
void pf_report_prediction_table(FILE *f, const pf_scenario *sc, const pf_prediction *p);

/* Read a whole file into a NUL-terminated buffer (caller frees *buf); *len
 * excludes the terminator.  A file larger than max_bytes (0: no limit) is
 * PF_EPARSE.  PF_ENOENT / PF_EIO / PF_ENOMEM name the path. */
int pf_read_file(const char *path, size_t max_bytes, char **buf, size_t *len);

/* Write text to path atomically (temporary file in the same directory, then
 * rename); "-" writes to stdout.  The old file is untouched on failure. */
int pf_write_file_atomic(const char *path, const char *text);

const char *pf_version(void);
const char *pf_git(void);

#endif
