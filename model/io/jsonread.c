/* jsonread.c - JSON read strictly (json.h, pf_json_parse_strict): the files
 * preflight reads back (calibration and fit overlays, measured collectives)
 * are one document and nothing else.  cJSON alone stops at the end of the
 * first value (trailing garbage, a second document pass unseen) and keeps
 * both members of a duplicated key (the first wins where a reader looks it
 * up, so an edit at the end of a file is silently ignored); here either is
 * an error naming the file, the line or the key.  A UTF-8 byte-order mark is
 * skipped (editors on Windows write one); CRLF is whitespace to JSON. */
#include "json.h"

#include "core/core.h"

#include <stdbool.h>
#include <string.h>

static int line_at(const char *text, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && text[i]; i++) line += text[i] == '\n';
  return line;
}

/* The printable text at pos (up to 24 characters of its line), into near. */
static void near_text(const char *text, size_t len, size_t pos, char *near, size_t n) {
  size_t k = 0;
  for (size_t i = pos; i < len && k + 1 < n && k < 24; i++) {
    unsigned char ch = (unsigned char)text[i];
    if (ch == '\n' && k > 0) break;
    if (ch >= 0x20 && ch < 0x7f) near[k++] = (char)ch;
  }
  near[k] = '\0';
}

/* A key twice in one object, anywhere in the tree: PF_EPARSE naming its path. */
static int duplicates(const char *path, const cJSON *o, const char *at) {
  for (const cJSON *a = o ? o->child : NULL; a; a = a->next) {
    char here[256];
    if (cJSON_IsObject(o) && a->string) {
      for (const cJSON *b = o->child; b != a; b = b->next)
        if (b->string && strcmp(a->string, b->string) == 0)
          return pf_error_set(PF_EPARSE, "%s: field %s%s%s: given twice (a reader would take the first and ignore "
                              "the second)", path, at, at[0] ? "." : "", a->string);
      snprintf(here, sizeof here, "%s%s%s", at, at[0] ? "." : "", a->string);
    } else {
      snprintf(here, sizeof here, "%s[]", at);
    }
    if (a->child && duplicates(path, a, here) < 0) return PF_EPARSE;
  }
  return 0;
}

cJSON *pf_json_parse_strict(const char *path, const char *text, size_t len) {
  size_t skip = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text + skip, len - skip, &end, 0);
  size_t pos = end && end >= text + skip ? (size_t)(end - text) : skip;
  if (pos > len) pos = len;
  char near[32];
  if (!root) {
    near_text(text, len, pos, near, sizeof near);
    bool at_end = pos + strlen(near) >= len;
    pf_error_set(PF_EPARSE, "%s:%d: malformed JSON near \"%s\"%s", path, line_at(text, pos), near,
                 at_end ? " (the file ends too early)" : "");
    return NULL;
  }
  while (pos < len && strchr(" \t\r\n", text[pos])) pos++;
  if (pos < len) {
    near_text(text, len, pos, near, sizeof near);
    pf_error_set(PF_EPARSE, "%s:%d: data after the JSON document, near \"%s\" (one document per file)", path,
                 line_at(text, pos), near);
    cJSON_Delete(root);
    return NULL;
  }
  if (duplicates(path, root, "") < 0) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}
