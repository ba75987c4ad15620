/* json.c - the parts every JSON document shares: the tool's identity
 * (version, git) and the versioned root {"schema_version", "tool"}, and the
 * pretty-printed text with its closing newline (see json.h). */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#ifndef PF_VERSION
#define PF_VERSION "0.0.0"
#endif
#include "pf_git.h" /* PF_GIT: written at build time (cmake/gitstamp.cmake) */

const char *pf_version(void) { return PF_VERSION; }
const char *pf_git(void) { return PF_GIT; }

cJSON *pf_report_tool_json(void) {
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "name", "preflight");
  cJSON_AddStringToObject(t, "version", pf_version());
  cJSON_AddStringToObject(t, "git", pf_git());
  return t;
}

cJSON *pf_report_root_json(void) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "schema_version", PF_SCHEMA_VERSION);
  cJSON_AddItemToObject(j, "tool", pf_report_tool_json());
  return j;
}

char *pf_report_json_text(cJSON *doc) {
  char *s = cJSON_Print(doc);
  cJSON_Delete(doc);
  if (!s) return NULL;
  size_t n = strlen(s);
  char *t = malloc(n + 2);
  if (t) {
    memcpy(t, s, n);
    t[n] = '\n';
    t[n + 1] = '\0';
  }
  free(s);
  return t;
}

void pf_report_json_print(FILE *f, cJSON *doc) {
  char *t = pf_report_json_text(doc);
  if (t) fputs(t, f);
  free(t);
}
