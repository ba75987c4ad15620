/* fmt_markdown.c - the Markdown format (--format markdown or md, -o FILE.md):
 * a report to paste into a proposal or a review, valid only for the commands
 * that write one (pf_cli_spec.markdown).  None of the documents in
 * formats.h's renderer table has a Markdown form yet; plan and validate write
 * theirs in plan_render.c and validate_out.c / validate_coll.c. */
#include "formats.h"

const pf_doc_renderers pf_fmt_markdown_renderers = {0};
