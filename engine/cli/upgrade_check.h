/* upgrade_check.h - `sluice upgrade-check` (upgrade_check.c). */
#ifndef SL_CLI_UPGRADE_CHECK_H
#define SL_CLI_UPGRADE_CHECK_H

/* argv[0] is "upgrade-check". Returns the exit code: 0 every job restores, 1 refused or an
 * error (printed), 2 bad arguments. */
int sl_cli_upgrade_check(int argc, char **argv);

#endif
