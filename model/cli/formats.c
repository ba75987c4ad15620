/* formats.c - the table of output formats: the one place a format's names,
 * aliases and -o suffixes are written (formats.h).  --format, -o FILE.suffix
 * and the "valid: ..." messages all read it.  Adding a format: its renderers
 * in one new file (fmt_NAME.c) and one row here. */
#include "formats.h"

#include <stdio.h>
#include <string.h>

static const pf_format_desc formats[PF_FMT_COUNT] = {
    {PF_FMT_TABLE, "table", NULL, NULL, false, true, &pf_fmt_table_renderers},
    {PF_FMT_JSON, "json", NULL, "json", false, false, &pf_fmt_json_renderers},
    {PF_FMT_CSV, "csv", NULL, "csv", false, false, &pf_fmt_csv_renderers},
    {PF_FMT_MARKDOWN, "markdown", "md", "md", true, true, &pf_fmt_markdown_renderers},
    {PF_FMT_TEX, "tex", "latex", "tex", true, true, &pf_fmt_tex_renderers},
};

const pf_format_desc *pf_format_get(pf_format id) {
  return &formats[id >= 0 && id < PF_FMT_COUNT ? id : PF_FMT_TABLE];
}

const pf_doc_renderers *pf_fmt(pf_format id) { return pf_format_get(id)->r; }

const char *pf_fmt_net_params(const pf_machine *m, char *buf, size_t n) {
  const pf_net_kind *k = m->net.kind;
  if (k) k->describe(&m->net, buf, n);
  else snprintf(buf, n, "?");
  return buf;
}

int pf_format_named(const char *name, unsigned allow_opt_in) {
  for (int i = 0; i < PF_FMT_COUNT; i++) {
    const pf_format_desc *d = &formats[i];
    if (d->opt_in && !(allow_opt_in & PF_FMT_BIT(d->id))) continue;
    if (strcmp(name, d->name) == 0 || (d->alias && strcmp(name, d->alias) == 0)) return d->id;
  }
  return -1;
}

const char *pf_format_of_suffix(const char *path, unsigned allow_opt_in) {
  size_t n = path ? strlen(path) : 0;
  for (int i = 0; i < PF_FMT_COUNT; i++) {
    const pf_format_desc *d = &formats[i];
    if (!d->suffix || (d->opt_in && !(allow_opt_in & PF_FMT_BIT(d->id)))) continue;
    size_t k = strlen(d->suffix);
    /* a name before the dot: "x.json", not ".json" */
    if (n > k + 1 && path[n - k - 1] == '.' && strcmp(path + n - k, d->suffix) == 0) return d->name;
  }
  return NULL;
}

bool pf_format_offers(pf_format id, size_t doc, bool allow_opt_in) {
  const pf_format_desc *d = pf_format_get(id);
  if (d->opt_in && !allow_opt_in) return false;
  if (doc == 0) return true;
  void (*fn)(void) = NULL; /* the renderer at that member: a NULL one means the format does not write it */
  memcpy(&fn, (const char *)d->r + (doc - 1), sizeof fn);
  return fn != NULL;
}

const char *pf_format_list_for(char *buf, size_t size, size_t doc, bool allow_opt_in, bool with_suffix) {
  size_t at = 0;
  if (size) buf[0] = '\0';
  for (int i = 0; i < PF_FMT_COUNT && size; i++) {
    if (!pf_format_offers(formats[i].id, doc, allow_opt_in)) continue;
    char sfx[32] = "";
    if (with_suffix && formats[i].suffix) snprintf(sfx, sizeof sfx, " (.%s)", formats[i].suffix);
    int w = snprintf(buf + at, size - at, "%s%s%s", at ? ", " : "", formats[i].name, sfx);
    if (w < 0 || (size_t)w >= size - at) break;
    at += (size_t)w;
  }
  return buf;
}

int pf_format_of_ext(const char *sfx) {
  for (int i = 0; i < PF_FMT_COUNT; i++)
    if (sfx && formats[i].suffix && strcmp(sfx, formats[i].suffix) == 0) return formats[i].id;
  return -1;
}
