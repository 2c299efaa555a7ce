/* record.h — the `rperf-gvl record` subcommand: runs a command with the
 * profiler loaded (lib/rperf/autorecord.rb through RUBYOPT), puts the report
 * it writes at the output, and prints its summary.
 *
 * Contract: record_main() takes the arguments after "record" (argv[0] is
 * "record"), prints its own messages through say(), and returns the exit
 * code of docs/cli.md ("record"): the program's status, 74 when an output
 * was not written, 127 when the program could not start. It changes the
 * process's environment, signal handlers (restored before it returns) and,
 * on a terminal, the foreground process group (given back). It is called
 * once per process. CLI-only: not compiled into the Ruby extension.
 */
#ifndef RPERF_RECORD_H
#define RPERF_RECORD_H

int record_main(int argc, char **argv);

#endif
