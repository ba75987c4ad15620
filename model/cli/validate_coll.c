/* validate_coll.c - `preflight validate` on measured collectives: a
 * collective CSV (scenarios/validation/collectives.csv) or a nccl-tests /
 * rccl-tests output file (collval.h).  Prints each row's measurement,
 * prediction and relative error, then the median and mean absolute error
 * (all rows, and rows of 1 MiB and more, where bandwidth rather than
 * latency decides), through the format table's collval renderer
 * (fmt_table.c, fmt_json.c, fmt_markdown.c, fmt_csv.c: one line per row).  Exit 1 with
 * --max-error P when the median exceeds P. */
#include "cli.h"
#include "options.h"

#include "study/study.h"
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pf_cli_validate_collectives(pf_cli *cli, const char *path, int kind) {
  const pf_optvals *v = &cli->v;
  pf_cvset s;
  int rc, nodes = 0, gpn = 0;
  if ((rc = pf_opts_int(v, "nodes", &nodes)) < 0 || (rc = pf_opts_int(v, "gpus-per-node", &gpn)) < 0)
    return pf_cli_fail("validate", rc);
  rc = kind == 1 ? pf_collval_read_csv(path, &s)
                 : pf_collval_read_nccltests(path, pf_opts_get(v, "machine"), nodes, gpn, &s);
  if (rc < 0) return pf_cli_fail("validate", rc);
  pf_collval_run(&s);
  void (*render)(FILE *, const pf_cvset *, bool) = pf_fmt(cli->fmt)->collval; /* the format table's renderer */
  if (!render) {
    pf_cvset_free(&s);
    return pf_cli_fail("validate", pf_error_set(PF_EINVAL, "--format csv: collective rows print as table, json or "
                                                "markdown"));
  }
  char *text = NULL;
  size_t len = 0;
  FILE *mf = open_memstream(&text, &len);
  if (mf) {
    render(mf, &s, !pf_opts_get(v, "summary-only"));
    fclose(mf);
  }
  if (!text) { pf_cvset_free(&s); return pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory")); }
  int status = 0;
  if ((rc = pf_cli_emit(cli, text)) < 0) status = pf_cli_fail("validate", rc);
  free(text);
  double maxe;
  if (status == 0 && (rc = pf_opts_double(v, "max-error", &maxe)) < 0) status = pf_cli_fail("validate", rc);
  else if (status == 0 && rc > 0) {
    pf_vstats st = pf_collval_stats(&s, 0);
    if (st.n == 0 || st.median_abs_pct > maxe) {
      fprintf(stderr, "preflight validate: median |error| %.2f %% exceeds --max-error %g %%\n", st.median_abs_pct, maxe);
      status = 1;
    }
  }
  pf_cvset_free(&s);
  return status;
}
