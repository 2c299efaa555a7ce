/* metrics_cmd.h — the `rperf-gvl metrics DIR` subcommand: the metrics
 * directory's files added up and printed as Prometheus text (for
 * node_exporter's textfile collector, or a look by hand).
 *
 * Contract: metrics_main() takes the arguments after "metrics" (argv[0]
 * is "metrics"), prints its messages through say() and returns an exit
 * code of docs/cli.md: 0, 2 (a bad directory or file), 64 (usage), 70
 * (out of memory), 74 (the output could not be written). CLI-only: not
 * compiled into the Ruby extension.
 */
#ifndef RPERF_METRICS_CMD_H
#define RPERF_METRICS_CMD_H

int metrics_main(int argc, char **argv);

#endif
