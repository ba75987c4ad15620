/* fmt_table_coll.c - the table format's collective documents (--format table): `collective`, the
 * nccl-tests output form (its columns and time precision, common.cu), and `validate` on measured
 * collectives (collectives.csv, nccl-tests output).  A file of its own by document kind beside
 * fmt_table.c (formats.h). */
#include "formats.h"
#include "validate_out.h"

#include "core/core.h"
#include "machine/machine.h"

#include <stdio.h>

/* nccl-tests' time column: two decimals below 10 ms, one below 100 ms, none above (common.cu). */
static void nccl_time(char *buf, size_t n, double us) {
  snprintf(buf, n, us < 1e4 ? "%7.2f" : us < 1e5 ? "%7.1f" : "%7.0f", us);
}

void pf_fmt_table_collective(FILE *f, const pf_coll_doc *d) {
  const pf_machine *m = d->m;
  pf_coll_kind op = d->op;
  int reduce = op == PF_ALLREDUCE || op == PF_REDUCE_SCATTER;
  for (int i = 0; i < d->nr; i++) {
    const pf_coll_run *u = &d->runs[i];
    fprintf(f, "# nThread 1 nGpus 1 minBytes %.0f maxBytes %.0f step: 2(factor) warmup iters: 0 iters: 0 agg iters: 1 "
               "validation: 0 graph: 0\n#\n", u->n ? u->size[0] : 0, u->n ? u->size[u->n - 1] : 0);
    fprintf(f, "# Collective test starting: %s_perf\n", pf_coll_kind_id(op));
    fprintf(f, "# preflight collective: %s_perf model on %s (%s), library %s, placement %s\n", pf_coll_kind_id(op), m->id,
            m->name, pf_ccl_lib_name(m->ccl), pf_placement_name(d->pl));
    fprintf(f, "# nodes %d, GPUs per node %d, ranks %d, %s %s\n", u->nodes, u->gpn, u->ranks,
            pf_fabric_kind_name(m->fabric), m->net.tech[0] ? m->net.tech : pf_topology_kind_name(m->net.kind));
    char note[512];
    pf_ccl_tuner_note(m->ccl, m->ccl_version, note, sizeof note);
    fprintf(f, "# tuner: %s\n", note);
    if (m->ccl_table.present)
      fprintf(f, "# library: measured table for ring steps (%s); other algorithms the library's tuning constants\n",
              m->ccl_table.plugin[0] ? m->ccl_table.plugin : "machine file");
    else
      fprintf(f, "# library: no measured table for this machine: the library's tuning constants on the topology\n");
    fprintf(f, "# in-place priced as the separate-buffer call; #wrong N/A: nothing is checked\n#\n");
    fprintf(f, "#%62s%35s\n", "out-of-place", "in-place");
    fprintf(f, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s  %-9s %s\n", "size", "count", "type",
            "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", "algorithm",
            "protocol");
    fprintf(f, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s\n", "(B)", "(elements)", "", "", "", "(us)",
            "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)");
    for (int k = 0; k < u->n; k++) {
      const pf_coll_result *r = &u->r[k];
      char t[32];
      nccl_time(t, sizeof t, r->time_s * 1e6);
      fprintf(f, "%12.0f  %12.0f  %8s  %6s  %6d", u->size[k], pf_coll_count(op, u->size[k], d->dtype_size, u->ranks),
              d->dtype, reduce ? "sum" : "none", -1);
      for (int pass = 0; pass < 2; pass++) /* out-of-place, in-place */
        fprintf(f, "  %7s  %6.2f  %6.2f  %6s", t, r->alg_bw_Bps / 1e9, r->bus_bw_Bps / 1e9, "N/A");
      fprintf(f, "  %-9s %s\n", pf_coll_algo_name(r->algo), pf_coll_proto_name(r->proto));
    }
    fprintf(f, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.6g \n#\n# Collective test concluded: %s_perf\n%s",
            u->avg_busbw / 1e9, pf_coll_kind_id(op), i + 1 < d->nr ? "#\n" : "");
  }
}

/* ---- validate on measured collectives ---- */

void pf_fmt_table_collval(FILE *f, const pf_cvset *s, bool rows) {
  fprintf(f, "validation: %s (%d collective rows)\n", s->path, s->n);
  if (rows) {
    fprintf(f, "%5s  %-16s %-14s %5s %4s %10s  %-8s %10s %10s %8s  %-15s %s\n", "line", "machine", "op", "nodes", "gpn",
            "size", "metric", "measured", "predicted", "error", "model", "use");
    for (int i = 0; i < s->n; i++) {
      const pf_cvrow *r = &s->rows[i];
      char sz[32], model[40], meas[32];
      pf_vfmt_size(r->size_B, sz, sizeof sz);
      if (r->bound == PF_BOUND_RANGE) snprintf(meas, sizeof meas, "%g-%g", r->measured, r->measured_hi);
      else snprintf(meas, sizeof meas, "%s%g", r->bound == PF_BOUND_LOWER ? ">= " : r->bound == PF_BOUND_UPPER ? "<= " : "",
                    r->measured);
      if (!r->ok) {
        fprintf(f, "%5d  %-16s %-14s %5d %4d %10s  %-8s %10s  not predicted: %s\n", r->line, r->machine,
                pf_coll_kind_id(r->op), r->nodes, r->gpn, sz, pf_cmetric_name(r->metric), meas, r->reason);
        continue;
      }
      snprintf(model, sizeof model, "%s/%s", pf_coll_algo_name(r->pred_algo), pf_coll_proto_name(r->pred_proto));
      fprintf(f, "%5d  %-16s %-14s %5d %4d %10s  %-8s %10s %10.4g %+7.1f%%  %-15s %s\n", r->line, r->machine,
              pf_coll_kind_id(r->op), r->nodes, r->gpn, sz, pf_cmetric_name(r->metric), meas, r->predicted,
              100 * r->error, model, r->use);
    }
  }
  pf_vstats all = pf_collval_stats(s, 0), big = pf_collval_stats(s, PF_CV_LARGE_B);
  fprintf(f, "\nsummary: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d predicted rows\n",
          all.median_abs_pct, all.mean_abs_pct, all.max_abs_pct, all.n);
  if (big.n > 0 && big.n < all.n)
    fprintf(f, "rows >= 1 MiB: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d rows\n", big.median_abs_pct,
            big.mean_abs_pct, big.max_abs_pct, big.n);
}
