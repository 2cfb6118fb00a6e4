/* commands — the sonde subcommands. Each takes the arguments after its own
 * name (argv[0] is the subcommand name) and returns the process exit code. */
#ifndef SONDE_COMMANDS_H
#define SONDE_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_lat(int argc, char **argv);
int cmd_threads(int argc, char **argv);
int cmd_slow(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_heatmap(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_ctl(int argc, char **argv);

#endif
