/* test_collective_props.c - invariants of the whole engine (pf_predict):
 *  - more bandwidth never slows a run: scaling every NIC, switch, global and
 *    intra-node link rate up by 2 and 8 never increases iteration_time, on
 *    fat tree, dragonfly and dragonfly+ machines, for several plans and every
 *    forced collective algorithm;
 *  - identical input gives identical output. */
#include "check.h"

#include "core/core.h"
#include "study/study.h"
#include "workload/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *machine, *model;
  int nodes, tp, pp, gbs;
  bool dist_opt, sp;
  pf_coll_algo algo;
  pf_schedule sched;
  int v;
} plan_case;

static void scale_bw(pf_machine *m, double k) {
  m->nic_bw_Bps *= k;
  m->net.link_bw_Bps *= k;
  m->net.global_bw_per_group_Bps *= k;
  m->fabric_bw_Bps *= k;
  m->fabric_pair_bw_Bps *= k;
  m->host_link_bw_Bps *= k;
}

static int predict(const plan_case *c, double k, pf_prediction *out) {
  pf_scenario *sc = malloc(sizeof *sc);
  pf_scenario_init(sc);
  int rc = pf_machine_load(c->machine, &sc->machine);
  if (rc == 0) rc = pf_workload_builtin(c->model, &sc->workload);
  if (rc == 0) {
    scale_bw(&sc->machine, k);
    sc->nodes = c->nodes;
    sc->plan.tp = c->tp;
    sc->plan.pp = c->pp;
    sc->plan.gbs = c->gbs;
    sc->plan.dist_opt = c->dist_opt;
    sc->plan.sp = c->sp;
    sc->plan.recompute = PF_RECOMPUTE_SELECTIVE;
    sc->plan.schedule = c->sched;
    sc->plan.vstages = c->v > 0 ? c->v : 1;
    sc->collective = c->algo;
    rc = pf_resolve_predict(sc, out);
  }
  free(sc);
  return rc;
}

int main(void) {
  const plan_case cases[] = {
      {"mn5-acc", "gpt3-13b", 16, 4, 4, 64, true, true, PF_COLL_AUTO, PF_SCHED_1F1B, 1},
      {"mn5-acc", "gpt3-1.3b", 16, 1, 2, 128, false, false, PF_COLL_AUTO, PF_SCHED_1F1B, 1},
      {"lumi-g", "gpt3-13b", 16, 4, 4, 64, true, true, PF_COLL_AUTO, PF_SCHED_INTERLEAVED, 2},
      {"lumi-g", "gpt3-1.3b", 8, 2, 2, 64, false, false, PF_COLL_HIERARCHICAL, PF_SCHED_1F1B, 1},
      {"lumi-g", "gpt3-1.3b", 8, 2, 2, 64, false, false, PF_COLL_RABENSEIFNER, PF_SCHED_GPIPE, 1},
      {"jupiter-booster", "gpt3-6.7b", 64, 4, 2, 256, true, true, PF_COLL_AUTO, PF_SCHED_1F1B, 1},
      {"jureca-dc-a100", "gpt3-1.3b", 16, 2, 4, 64, false, false, PF_COLL_TREE, PF_SCHED_1F1B, 1},
      {"leonardo-booster", "gpt3-1.3b", 32, 1, 4, 128, false, false, PF_COLL_RING, PF_SCHED_1F1B, 1},
  };
  const double scales[] = {1, 2, 8};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double last = 0;
    for (int k = 0; k < 3; k++) {
      pf_prediction p;
      int rc = predict(&cases[i], scales[k], &p);
      CHECK_INT(rc, 0);
      if (rc != 0) { fprintf(stderr, "%s: %s\n", cases[i].machine, pf_error_detail()); break; }
      if (k > 0 && !(p.iteration_time_s <= last * (1 + 1e-12)))
        fprintf(stderr, "%s %s x%g: %.9g s > %.9g s\n", cases[i].machine, cases[i].model, scales[k],
                p.iteration_time_s, last);
      CHECK(k == 0 || p.iteration_time_s <= last * (1 + 1e-12));
      last = p.iteration_time_s;
    }
  }
  /* determinism */
  pf_prediction a, b;
  CHECK(predict(&cases[2], 1, &a) == 0);
  CHECK(predict(&cases[2], 1, &b) == 0);
  CHECK(memcmp(&a.breakdown_s, &b.breakdown_s, sizeof a.breakdown_s) == 0);
  CHECK(a.iteration_time_s == b.iteration_time_s);
  return pf_check_done();
}
