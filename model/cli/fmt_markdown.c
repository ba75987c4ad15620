/* fmt_markdown.c - the Markdown format (--format markdown or md, -o FILE.md):
 * a report to paste into a proposal or a review, valid only for the commands
 * that write one (pf_cli_spec.markdown): plan's section for a proposal
 * (plan_render.c).  validate's Markdown is still written in validate_out.c
 * and validate_coll.c. */
#include "formats.h"
#include "plan.h"

const pf_doc_renderers pf_fmt_markdown_renderers = {
    .plan = pf_plan_markdown,
};
