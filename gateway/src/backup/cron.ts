/**
 * The next time a cron expression names. cron-parser is loaded on first use, so a process
 * without PLINTH_BACKUP_CRON (every cluster gateway, most standalone servers) never loads it.
 */
const loadCronParser = (): typeof import('cron-parser') => require('cron-parser') as typeof import('cron-parser');

/** Five fields (minute hour day month weekday) or six (seconds first); throws on an expression it cannot read. */
export function nextRun(cron: string, after: Date): Date {
  return loadCronParser().CronExpressionParser.parse(cron, { currentDate: after }).next().toDate();
}
