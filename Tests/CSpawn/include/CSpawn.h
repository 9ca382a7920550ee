#ifndef CSPAWN_H
#define CSPAWN_H

#include <spawn.h>

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34+), which Swift's Glibc module leaves out: it is declared only
/// with _GNU_SOURCE. Returns its result (0, or an error number).
int tc_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);

#endif
