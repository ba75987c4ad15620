/* json.h - what every JSON document of preflight shares (json.c): the
 * schema version, the tool's identity and the printed text. */
#ifndef PREFLIGHT_JSON_H
#define PREFLIGHT_JSON_H

#include <cjson/cJSON.h>
#include <stdio.h>

#define PF_SCHEMA_VERSION 1

/* One JSON document read strictly (jsonread.c): a UTF-8 byte-order mark skipped, nothing but blanks after
 * the document, no key twice in an object; NULL with PF_EPARSE naming path:line (malformed, trailing data)
 * or the key.  Caller frees. */
cJSON *pf_json_parse_strict(const char *path, const char *text, size_t len);

/* A result document's root: {"schema_version": 1, "tool": {...}}; caller frees. */
cJSON *pf_report_root_json(void);
/* Pretty-printed doc plus a newline, as a string (caller frees; NULL when out
 * of memory), or printed to f; both delete doc. */
char *pf_report_json_text(cJSON *doc);
void pf_report_json_print(FILE *f, cJSON *doc);
/* {"version":..., "git":...}; caller frees. */
cJSON *pf_report_tool_json(void);
const char *pf_version(void);
const char *pf_git(void);

#endif
