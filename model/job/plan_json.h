/* plan_json.h - the JSON of a parallel plan, written in one place for every
 * document that carries one.  Each document keeps the fields and the order it
 * has always had (the golden corpus holds them byte for byte), so the plan has
 * a few forms, named here:
 *   FULL   prediction documents' "parallel" (report/report.c): tp pp dp cp mbs
 *          gbs grad_accum microbatches schedule ("interleaved:V") sp dist_opt zero
 *          [shard_group fsdp_prefetch fsdp_impl from zero 2 on]
 *          overlap_grad_reduce overlap_param_gather [ddp_bucket_size, when set]
 *          recompute flash_attn tp_comm_overlap [fp8_recipe when not auto,
 *          fp8_attention when set]
 *   SHAPE  plan rows' "parallel" (cli/plan_render.c): tp pp dp cp mbs gbs, then
 *          the caller's "options" text
 *   ASKED  a sweep point with no prediction (cli/cmd_sweep.c): the plan as
 *          asked, tp pp gbs, each only when set (> 0)
 *   TUNE   tune's finalists and shards (study/tune.c), flat in the candidate:
 *          tp pp dp cp mbs gbs microbatches schedule vstages recompute sp
 *          dist_opt zero [shard_group fsdp_prefetch fsdp_impl] overlap_grad_reduce
 *          overlap_param_gather flash_attn
 *          tp_comm_overlap, then the
 *          caller's "options" text; pf_plan_json_read() reads it back.
 */
#ifndef PREFLIGHT_PLAN_JSON_H
#define PREFLIGHT_PLAN_JSON_H

#include "plan.h"

#include <cjson/cJSON.h>

typedef enum { PF_PLAN_FORM_FULL, PF_PLAN_FORM_SHAPE, PF_PLAN_FORM_ASKED, PF_PLAN_FORM_TUNE } pf_plan_form;

/* Add the fields of pl in form to o (borrowed; a failed allocation leaves a field out, as cJSON does). */
void pf_plan_json_fields(cJSON *o, const pf_plan *pl, pf_plan_form form);
/* Add the object "parallel" with the fields of pl in form to parent; returns it (owned by parent), NULL when
 * out of memory. */
cJSON *pf_plan_json_parallel(cJSON *parent, const pf_plan *pl, pf_plan_form form);
/* Read the TUNE form from o into *pl (cleared first): 0, or -1 when a field is missing or malformed. */
int pf_plan_json_read(const cJSON *o, pf_plan *pl);

#endif
