/* fmt_tex.c - the LaTeX format (--format tex, -o FILE.tex): booktabs tables a
 * proposal's LaTeX template takes as they are.  Opt-in: offered by the
 * commands whose pf_cli_spec allows it (plan, whose section is plan_doc.c). */
#include "formats.h"
#include "plan.h"

const pf_doc_renderers pf_fmt_tex_renderers = {
    .plan = pf_plan_tex,
};
