/* error.c - the error table of error.h, the per-thread detail message, the
 * warning sink and the "did you mean" helper (Levenshtein distance). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char detail[2048];

const char *pf_err_name(int code) {
  switch (code) {
  case PF_OK: return "OK";
#define PF_X_NAME(name, val, exit_code, msg) case val: return #name;
    PF_ERRNO_MAP(PF_X_NAME)
#undef PF_X_NAME
  }
  return "EUNKNOWN";
}

const char *pf_strerror(int code) {
  switch (code) {
  case PF_OK: return "success";
#define PF_X_MSG(name, val, exit_code, msg) case val: return msg;
    PF_ERRNO_MAP(PF_X_MSG)
#undef PF_X_MSG
  }
  return "unknown error";
}

int pf_error_exit_code(int code) {
  switch (code) {
  case PF_OK: return 0;
#define PF_X_EXIT(name, val, exit_code, msg) case val: return exit_code;
    PF_ERRNO_MAP(PF_X_EXIT)
#undef PF_X_EXIT
  }
  return 2;
}

int pf_error_set(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return code;
}

const char *pf_error_detail(void) { return detail; }

void pf_error_clear(void) { detail[0] = '\0'; }

void pf_warn(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "preflight: warning: %s\n", msg);
}

/* Edit distance of two short strings: insertions, deletions, substitutions
 * and transpositions of neighbours ("idel" for "idle" is one edit; optimal
 * string alignment distance), capped at 64 characters each (longer names are
 * never typos of each other here). */
static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return 99;
  int d[65][65];
  for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
      int best = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

const char *pf_closest(const char *word, const char *const *candidates, int n) {
  size_t len = strlen(word);
  int limit = len <= 4 ? 1 : len <= 8 ? 2 : (int)(len / 3);
  const char *best = NULL;
  int bestd = limit + 1;
  for (int i = 0; i < n; i++) {
    if (!candidates[i]) continue;
    int d = edit_distance(word, candidates[i]);
    if (d < bestd) { bestd = d; best = candidates[i]; }
  }
  return best;
}

/* How near candidate c is to word: 0 when word is a prefix of it, else its
 * edit distance; -1 when neither is near (pf_closest's limit). */
static int nearness(const char *word, const char *c) {
  size_t len = strlen(word);
  if (len > 0 && strncmp(word, c, len) == 0) return 0;
  int limit = len <= 4 ? 1 : len <= 8 ? 2 : (int)(len / 3);
  int d = edit_distance(word, c);
  return d <= limit ? d : -1;
}

int pf_suggest(const char *word, const char *const *candidates, int n, char *buf, size_t len) {
  enum { MAXNAMED = 4 };
  buf[0] = '\0';
  int best = 99;
  for (int i = 0; i < n; i++) {
    int d = candidates[i] ? nearness(word, candidates[i]) : -1;
    if (d >= 0 && d < best) best = d;
  }
  if (best == 99) return 0;
  const char *named[MAXNAMED];
  int k = 0;
  for (int i = 0; i < n && k < MAXNAMED; i++)
    if (candidates[i] && nearness(word, candidates[i]) == best) named[k++] = candidates[i];
  size_t used = (size_t)snprintf(buf, len, "did you mean ");
  for (int i = 0; i < k && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i == 0 ? "" : i + 1 == k ? " or " : ", ", named[i]);
  if (used < len) snprintf(buf + used, len - used, "?");
  return k;
}

int pf_error_is_failure(int code) { return code == PF_ESIM || code == PF_ENOMEM || code == PF_EIO; }
