/**
 * Replication positions of MySQL-family servers, as consistency tokens:
 * - MariaDB GTID lists, "domain-server-seq[,domain-server-seq...]" (@@gtid_current_pos, @@last_gtid):
 *   within a domain, sequence numbers only grow (gtid_strict_mode), whichever server wrote them;
 * - MySQL GTID sets, "uuid:1-5:7,uuid2:1-3" (@@gtid_executed): sets of transaction numbers per source,
 *   and per tag since MySQL 8.3 ("uuid:1-5:tag:1-3": the numbers after a tag belong to uuid:tag).
 * Positions are compared by inclusion: `comparePositions(a, b) >= 0` means a server at `a` has applied
 * everything in `b`.
 */

const MARIADB_GTID = /^\d+-\d+-\d+$/;
const MYSQL_GTID_SET_PART = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?::(?:[a-zA-Z_][a-zA-Z0-9_]{0,31}|\d+(?:-\d+)?))+$/;
const TAG = /^[a-zA-Z_][a-zA-Z0-9_]{0,31}$/;

function parts(text: string): string[] {
  return text
    .replace(/\s+/g, "")
    .split(",")
    .filter((part) => part.length > 0);
}

export function isMariaDbGtidList(text: string): boolean {
  const items = parts(text);
  return items.length > 0 && items.every((item) => MARIADB_GTID.test(item));
}

export function isMysqlGtidSet(text: string): boolean {
  const items = parts(text);
  return items.length > 0 && items.every((item) => MYSQL_GTID_SET_PART.test(item));
}

/** Highest sequence number per replication domain. */
function mariaDbDomains(text: string): Map<string, bigint> {
  const domains = new Map<string, bigint>();
  for (const item of parts(text)) {
    const [domain, , seq] = item.split("-") as [string, string, string];
    const value = BigInt(seq);
    const known = domains.get(domain);
    if (known === undefined || value > known) domains.set(domain, value);
  }
  return domains;
}

type Interval = [bigint, bigint];

/** Transaction-number intervals per source (UUID, or UUID:tag), merged and sorted. */
function mysqlSources(text: string): Map<string, Interval[]> {
  const sources = new Map<string, Interval[]>();
  for (const item of parts(text)) {
    const [uuid, ...ranges] = item.split(":") as [string, ...string[]];
    let source = uuid.toLowerCase();
    for (const range of ranges) {
      if (TAG.test(range)) {
        source = `${uuid.toLowerCase()}:${range.toLowerCase()}`;
        continue;
      }
      const [start, end] = range.split("-") as [string, string | undefined];
      const intervals = sources.get(source) ?? [];
      intervals.push([BigInt(start), BigInt(end ?? start)]);
      sources.set(source, intervals);
    }
  }
  for (const [uuid, intervals] of sources) {
    intervals.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    const merged: Interval[] = [];
    for (const interval of intervals) {
      const last = merged[merged.length - 1];
      if (last && interval[0] <= last[1] + 1n) last[1] = interval[1] > last[1] ? interval[1] : last[1];
      else merged.push([interval[0], interval[1]]);
    }
    sources.set(uuid, merged);
  }
  return sources;
}

function mariaDbIncludes(a: string, b: string): boolean {
  const have = mariaDbDomains(a);
  for (const [domain, seq] of mariaDbDomains(b)) {
    const applied = have.get(domain);
    if (applied === undefined || applied < seq) return false;
  }
  return true;
}

function mysqlIncludes(a: string, b: string): boolean {
  const have = mysqlSources(a);
  for (const [uuid, wanted] of mysqlSources(b)) {
    const applied = have.get(uuid) ?? [];
    for (const [start, end] of wanted) {
      if (!applied.some(([from, to]) => from <= start && end <= to)) return false;
    }
  }
  return true;
}

/** Whether a server at position `a` has applied everything in position `b` (same flavour). */
export function positionIncludes(a: string, b: string): boolean {
  if (b.trim() === "") return true;
  if (isMariaDbGtidList(b)) return a.trim() !== "" && isMariaDbGtidList(a) && mariaDbIncludes(a, b);
  if (isMysqlGtidSet(b)) return a.trim() !== "" && isMysqlGtidSet(a) && mysqlIncludes(a, b);
  return false;
}

/**
 * A comparator over inclusion: >= 0 when `a` includes `b` (0 when each includes the other), negative
 * otherwise, including when neither includes the other.
 */
export function compareGtidPositions(a: string, b: string): number {
  if (!positionIncludes(a, b)) return -1;
  return positionIncludes(b, a) ? 0 : 1;
}

export function isGtidPosition(text: string): boolean {
  return isMariaDbGtidList(text) || isMysqlGtidSet(text);
}
