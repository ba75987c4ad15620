/* cmd_machines.c - `preflight machines [show ID]`: loads the machines (and
 * --calibration's overlay) and hands them to the asked format's renderers
 * (formats.h: the `machines` and `machine` documents). */
#include "cli.h"
#include "formats.h"
#include "options.h"

#include "machine/machine.h"
#include "core/core.h"
#include "power/power.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pf_opt machine_opts[] = {
    {"calibration", "FILE.json", "show measured rates from a calibration file beside the datasheet",
     .type = PF_OPT_TEXT},
    {"like", "ID", "with `new`: start from a copy of this machine", .type = PF_OPT_TEXT},
    PF_OPT_END};

static const pf_opt *const tables[] = {machine_opts, NULL};

static const pf_cli_spec spec = {
    "machines",
    "usage: preflight machines [--format table|json|csv]\n       preflight machines show ID [--calibration FILE.json]\n"
    "       preflight machines new ID [--like EXISTING] [-o FILE.cfg]\n\n"
    "Machines are read from $PREFLIGHT_MACHINES (default: machines/ of the data folder, with devices/ in it:\n"
    "the source tree, or PREFIX/share/preflight once installed);\n"
    "any command also takes --machine PATH.cfg.  `machines new` writes a file to start from.",
    tables, false, 2, false,
    "  preflight machines\n  preflight machines --format json\n  preflight machines show lumi-g\n"
    "  preflight machines new my-cluster --like mn5-acc -o my-cluster.cfg\n", false,
    .doc = PF_DOC(machines), .o_own = "new"};
const pf_cli_spec *const pf_cli_spec_machines = &spec; /* for the man page and the completion (gendoc.c) */


/* `machines show ID` as text in the asked format (caller frees). */
static int show(const char *id, const pf_cli *cli, char **text) {
  *text = NULL;
  pf_machine m, measured;
  int rc = pf_machine_load(id, &m);
  if (rc < 0 || (rc = pf_power_check(&m.dev)) < 0) return rc;
  const char *cal = pf_opts_get(&cli->v, "calibration");
  measured = m;
  if (cal) {
    pf_calibration c;
    if ((rc = pf_calibration_load(cal, &c)) < 0 || (rc = pf_calibration_apply(&c, &measured)) < 0) return rc;
  }
  const pf_doc_renderers *r = pf_fmt(cli->fmt);
  if (!r->machine) {
    char valid[128];
    return pf_error_set(PF_EINVAL, "machines show: --format %s: valid: %s", pf_format_get(cli->fmt)->name,
                        pf_format_list_for(valid, sizeof valid, PF_DOC(machine), false, false));
  }
  size_t len;
  FILE *f = open_memstream(text, &len);
  if (!f) return pf_error_set(PF_ENOMEM, "out of memory");
  r->machine(f, &m, cal ? &measured : NULL);
  fclose(f);
  return 0;
}

/* The machine list as text in the asked format (caller frees): every machine
 * is loaded first, so a file that does not load fails the list with nothing written. */
static int list(const pf_cli *cli, char **text) {
  char **ids;
  int n, rc;
  *text = NULL;
  const pf_doc_renderers *r = pf_fmt(cli->fmt);
  if ((rc = pf_machine_list(&ids, &n)) < 0) return rc;
  pf_machine *ms = calloc(n > 0 ? (size_t)n : 1, sizeof *ms);
  if (!ms) rc = pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < n && rc == 0; i++)
    rc = pf_machine_load(ids[i], &ms[i]);
  pf_strlist_free(ids, n);
  size_t len;
  FILE *f = rc < 0 ? NULL : open_memstream(text, &len);
  if (rc == 0 && !f) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (f) {
    r->machines(f, ms, n);
    fclose(f);
  }
  free(ms);
  return rc;
}

int pf_cmd_machines(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("machines", rc));
  const pf_optvals *v = &cli.v;
  char *text = NULL;
  const char *cmd = "machines";
  if (v->npositional >= 1 && strcmp(v->positional[0], "new") == 0) {
    cmd = "machines new";
    rc = pf_cli_machines_new(v, &text);
  } else if (pf_opts_get(v, "like")) {
    rc = pf_error_set(PF_EINVAL, "--like goes with `machines new ID`");
  } else if (v->npositional >= 1 && strcmp(v->positional[0], "show") == 0) {
    cmd = "machines show";
    if (v->npositional != 2) rc = pf_error_set(PF_EINVAL, "give one machine id: preflight machines show ID");
    else rc = show(v->positional[1], &cli, &text);
  } else if (v->npositional > 0) {
    rc = pf_error_set(PF_EINVAL, "unexpected argument \"%s\" (did you mean `machines show %s`?)", v->positional[0],
                      v->positional[0]);
  } else if (pf_opts_get(v, "calibration")) {
    rc = pf_error_set(PF_EINVAL, "--calibration goes with `machines show ID`");
  } else {
    rc = list(&cli, &text);
  }
  if (rc == 0) rc = pf_cli_emit(&cli, text);
  free(text);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail(cmd, rc) : 0);
}
