/* datadir.h - where the running program and the data it ships are.
 *
 * The data (machines/, scenarios/validation/, scenarios/examples/ ...) is
 * laid out the same in the source tree and where `make install` puts it
 * (PREFIX/share/preflight), so one root locates every part.  The root is,
 * first found: the installed layout beside the program (BINDIR/../share/
 * preflight, so an installed or DESTDIR-staged binary finds its own files
 * wherever it is run from); the source tree the program was built from (a
 * build-tree binary); the install folder configured at build time.
 * $PREFLIGHT_MACHINES and $PREFLIGHT_VALIDATION still override their parts.
 */
#ifndef PREFLIGHT_DATADIR_H
#define PREFLIGHT_DATADIR_H

#include <stddef.h>

/* The folder of the running executable (/proc/self/exe) into dir; 0 or PF_ENODEV (detail set). */
int pf_exe_dir(char *dir, size_t len);
/* The root of the shipped data (see above); borrowed, valid for the process. */
const char *pf_data_dir(void);
/* The install folder of the data configured at build time (PREFIX/share/preflight): what an installed
 * man page names. */
const char *pf_install_data_dir(void);

#endif
