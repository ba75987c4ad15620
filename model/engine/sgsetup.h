/* sgsetup.h - private: start SimGrid the one way this project runs it.
 *
 * The settings that matter (shared/research/simgrid-notes.md): the CM02 network
 * model with cross-traffic off gives the exact alpha-beta cost of a flow; a huge
 * TCP-gamma removes the TCP window cap on long routes; logs are silenced below
 * critical so nothing reaches our stdout/stderr.  Call once per process (the
 * engine is global), in the fork()ed child that runs the simulation.
 */
#ifndef PF_SGSETUP_H
#define PF_SGSETUP_H

/* Initialise SimGrid with our settings and load the platform XML file at
 * `platform` (then unlinks it).  stack_kib: actor stack size. */
void pf_simgrid_start(const char *platform, int stack_kib);

#endif
