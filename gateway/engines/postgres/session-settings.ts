/**
 * The session settings the value conversions and the SQL reader assume: timestamps converted to
 * ISO-8601 from the ISO DateStyle (UTC keeps offsets uniform), intervals as PostgreSQL prints them,
 * and standard-conforming strings (RESET ALL and DISCARD ALL return to these). PostgreSQL sessions
 * get them as startup options. Aurora DSQL sessions get none: DSQL accepts only some settings
 * ("setting configuration parameter ... not supported" for others) and its sessions start in UTC, so
 * they are checked instead, and a session that differs is refused rather than misread.
 */

const SETTINGS = {
  TimeZone: "UTC",
  DateStyle: "ISO,MDY",
  IntervalStyle: "postgres",
  standard_conforming_strings: "on",
} as const;

/** `pg`'s `options` startup parameter: `-c name=value` for each. */
export const STARTUP_OPTIONS = Object.entries(SETTINGS)
  .map(([name, value]) => `-c ${name}=${value}`)
  .join(" ");

/** One round trip reads them all, in SETTINGS order. */
export const SESSION_SETTINGS_SQL = `SELECT ${Object.keys(SETTINGS)
  .map((name) => `current_setting('${name}')`)
  .join(", ")}`;

/** Names PostgreSQL accepts for UTC itself (not zones that merely sit at +00:00 part of the year). */
const UTC_NAMES = /^(etc\/)?(utc|uct|gmt|gmt0|gmt[+-]0|greenwich|universal|zulu)$/i;

function matches(name: keyof typeof SETTINGS, shown: string): boolean {
  if (name === "TimeZone") return UTC_NAMES.test(shown);
  return shown.replace(/\s+/g, "").toLowerCase() === SETTINGS[name].toLowerCase();
}

/** What is wrong with a session's settings (a row of SESSION_SETTINGS_SQL), or undefined when nothing is. */
export function sessionSettingsProblem(row: readonly unknown[]): string | undefined {
  const wrong = (Object.keys(SETTINGS) as (keyof typeof SETTINGS)[]).flatMap((name, i) => {
    const value = row[i];
    const shown = typeof value === "string" ? value : "";
    return matches(name, shown) ? [] : [`${name} is "${shown}" where the gateway reads values as ${SETTINGS[name]}`];
  });
  return wrong.length === 0 ? undefined : `the session's settings differ from what the gateway needs: ${wrong.join("; ")}`;
}
