/* cfgints.c - integers in libconfig files read at 64 bits before libconfig
 * sees them.
 *
 * libconfig 1.5 (Debian 12's) reads an integer literal without the L suffix
 * with atoi(): `nodes = 4294968416;` becomes 1120 and `-4294967295` becomes 1,
 * with no error, so no range check after it can see the real value.  Every
 * reader of a libconfig file (machine and device files, scenario files, layer
 * lists) calls pf_cfg_check_ints on the file it has just parsed: each integer
 * literal (decimal or hexadecimal, outside strings and comments) is read again
 * from the text at 64 bits, and one that does not fit libconfig's 32-bit int
 * is refused with the file, line, key and its real value.  (A literal with
 * the L suffix is a 64-bit setting; the key readers check its range.)
 */
#include "cfgkeys.h"

#include "core/core.h"

#include <libconfig.h>
#include <stdio.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The end of a comment or string starting at p (p itself when there is none); counts newlines. */
static const char *skip_inert(const char *p, const char *end, int *line) {
  if (*p == '"') {
    for (p++; p < end && *p != '"'; p++) {
      if (*p == '\\' && p + 1 < end) p++;
      else if (*p == '\n') (*line)++;
    }
    return p < end ? p + 1 : end;
  }
  if (*p == '#' || (*p == '/' && p + 1 < end && p[1] == '/')) {
    while (p < end && *p != '\n') p++;
    return p;
  }
  if (*p == '/' && p + 1 < end && p[1] == '*') {
    for (p += 2; p + 1 < end && !(p[0] == '*' && p[1] == '/'); p++)
      if (*p == '\n') (*line)++;
    return p + 1 < end ? p + 2 : end;
  }
  return p;
}

static bool name_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '*'; }

/* The integer literal at p (sign included) does not fit an int: PF_EPARSE naming it. */
static int check_literal(const char *path, int line, const char *key, const char *p, const char **next) {
  const char *q = p + (*p == '-' || *p == '+');
  bool hex = q[0] == '0' && (q[1] == 'x' || q[1] == 'X');
  const char *e = q + (hex ? 2 : 0);
  while (hex ? isxdigit((unsigned char)*e) : isdigit((unsigned char)*e)) e++;
  *next = e;
  if (*e == '.' || *e == 'e' || *e == 'E' || *e == 'L' || *e == 'l') { /* a float, or a 64-bit literal */
    while (name_char(*e) || *e == '.' || ((*e == '-' || *e == '+') && (e[-1] == 'e' || e[-1] == 'E'))) e++;
    *next = e;
    return 0;
  }
  char text[64];
  snprintf(text, sizeof text, "%.*s", (int)(e - p < 63 ? e - p : 63), p);
  errno = 0;
  long long v = strtoll(text, NULL, hex ? 16 : 10);
  if (errno == 0 && v >= INT_MIN && v <= INT_MAX) return 0;
  return pf_error_set(PF_EPARSE, "%s:%d: %s: %s is %s: an integer setting lies between %d and %d", path, line,
                      key[0] ? key : "value", text, errno ? "beyond any 64-bit integer" : "out of range", INT_MIN,
                      INT_MAX);
}

int pf_cfg_check_ints(const char *path) {
  char *buf;
  size_t len;
  if (pf_read_file(path, PF_CFG_MAX_BYTES, &buf, &len) < 0) return 0; /* libconfig has read it */
  int rc = pf_cfg_check_ints_text(path, buf, len);
  free(buf);
  return rc;
}

int pf_cfg_check_ints_text(const char *path, const char *buf, size_t len) {
  const char *p = buf, *end = buf + len;
  char key[64] = "";
  int line = 1, rc = 0;
  while (p < end && rc == 0) {
    const char *q = skip_inert(p, end, &line);
    if (q != p) { p = q; continue; }
    if (*p == '\n') { line++; p++; continue; }
    if (isalpha((unsigned char)*p) || *p == '_' || *p == '*') { /* a setting's name (or true, false) */
      q = p;
      while (q < end && name_char(*q)) q++;
      if (strncmp(p, "true", 4) != 0 && strncmp(p, "false", 5) != 0)
        snprintf(key, sizeof key, "%.*s", (int)(q - p < 63 ? q - p : 63), p);
      p = q;
      continue;
    }
    bool signed_digit = (*p == '-' || *p == '+') && p + 1 < end && isdigit((unsigned char)p[1]);
    if (isdigit((unsigned char)*p) || signed_digit) rc = check_literal(path, line, key, p, &p);
    else p++;
  }
  return rc;
}

/* ---- the one way a libconfig file is opened (machines, devices, scenarios, layer lists) ---- */

/* The text's lines no longer than PF_CFG_MAX_LINE: libconfig's lexer is quadratic in a line's length (a
 * 10 MB line took 46-79 s), so a long one is refused before libconfig sees it. */
static int check_lines(const char *path, const char *buf, size_t len) {
  size_t start = 0;
  int line = 1;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && buf[i] != '\n') continue;
    if (i - start > PF_CFG_MAX_LINE)
      return pf_error_set(PF_EPARSE, "%s:%d: a line of %zu bytes; a line of a .cfg file holds at most %d (split "
                          "a long string with \"...\" \"...\")", path, line, i - start, PF_CFG_MAX_LINE);
    start = i + 1;
    line++;
  }
  return 0;
}

int pf_cfg_parse(config_t *cfg, const char *path, const char *what) {
  config_init(cfg);
  char *buf;
  size_t len;
  int rc = pf_read_file(path, PF_CFG_MAX_BYTES, &buf, &len);
  if (rc < 0) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    config_destroy(cfg);
    return pf_error_set(rc, "cannot read %s: %s", what, why);
  }
  /* a UTF-8 byte-order mark (Windows editors write one) is skipped; CRLF line ends libconfig reads as blanks */
  const char *text = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? buf + 3 : buf;
  size_t n = len - (size_t)(text - buf);
  if (memchr(text, '\0', n)) rc = pf_error_set(PF_EPARSE, "%s: a NUL byte: not a text file", path);
  if (rc == 0) rc = check_lines(path, text, n);
  if (rc == 0 && config_read_string(cfg, text) != CONFIG_TRUE)
    rc = pf_error_set(PF_EPARSE, "%s:%d: %s", path, config_error_line(cfg), config_error_text(cfg));
  if (rc == 0) rc = pf_cfg_check_ints_text(path, text, n);
  free(buf);
  if (rc < 0) config_destroy(cfg);
  return rc;
}
