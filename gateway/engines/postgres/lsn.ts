/** PostgreSQL WAL positions ("16/B374D848") as comparable numbers. */

export function lsnToBigInt(lsn: string): bigint {
  const slash = lsn.indexOf("/");
  if (slash < 0) throw new Error(`not a WAL position: ${lsn}`);
  return (BigInt(`0x${lsn.slice(0, slash)}`) << 32n) + BigInt(`0x${lsn.slice(slash + 1)}`);
}

export function compareLsn(a: string, b: string): number {
  const x = lsnToBigInt(a);
  const y = lsnToBigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isLsn(text: string): boolean {
  return /^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/.test(text);
}
