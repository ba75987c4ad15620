/* error.c - the error table of error.h and the per-thread detail message. */
#include "preflight/error.h"

#include <stdarg.h>
#include <stdio.h>

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
