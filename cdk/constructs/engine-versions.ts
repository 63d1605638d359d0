/**
 * The Aurora engine versions the stack deploys: one pinned minor per engine, each with the date its
 * standard support ends, so that a stack pinned to a minor about to be retired stops synthesising
 * (a fresh cluster on it would be upgraded by AWS within weeks, or refused) instead of deploying.
 *
 * Both pins are long-term-support (LTS) minors: AWS keeps an LTS minor in standard support for at
 * least three years from its release, or until the major version's end of standard support if that
 * comes first (Aurora User Guide, "Long-term support for selected Amazon Aurora minor versions",
 * https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.VersionPolicy.Support.html).
 * The dates below are that three-year floor counted from the community release the minor tracks (so
 * never later than AWS's own date); when bumping a pin, read the minor's row in the release calendar
 * (linked per engine) and write its "Aurora end of standard support" date here.
 */
import { aws_rds as rds } from "aws-cdk-lib";
import type { AuroraEngine } from "./pool-budget.js";

export interface PinnedEngineVersion {
  /** The engine version as RDS names it. */
  readonly version: string;
  /** The major version, as CloudFormation's parameter-group family needs it. */
  readonly major: string;
  /** The last day of standard support (UTC, YYYY-MM-DD), from `source`. */
  readonly endOfStandardSupport: string;
  /** Where the date and the LTS designation come from. */
  readonly source: string;
}

export const ENGINE_VERSIONS: Record<AuroraEngine, PinnedEngineVersion> = {
  // Aurora PostgreSQL 17.7, the designated LTS minor of 17 (community 17.7: 2025-11-13).
  postgres: {
    version: "17.7",
    major: "17",
    endOfStandardSupport: "2028-11-13",
    source: "https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraPostgreSQL.Updates.LTS.html, https://docs.aws.amazon.com/AmazonRDS/latest/AuroraPostgreSQLReleaseNotes/aurorapostgresql-release-calendar.html",
  },
  // Aurora MySQL 3.10 (MySQL 8.0.42), an LTS release since 2025-07-31.
  mysql: {
    version: "8.0.mysql_aurora.3.10.0",
    major: "8.0",
    endOfStandardSupport: "2028-07-31",
    source: "https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraMySQL.Update.SpecialVersions.html, https://docs.aws.amazon.com/AmazonRDS/latest/AuroraMySQLReleaseNotes/AuroraMySQL.Updates.3100.html",
  },
};

/** A deploy must leave this long before the end of standard support: time to plan the upgrade. */
export const RETIREMENT_NOTICE_DAYS = 90;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Days from `now` to the end of the pinned version's standard support (negative once past it). */
export function daysOfStandardSupportLeft(pinned: PinnedEngineVersion, now: Date): number {
  return Math.floor((Date.parse(`${pinned.endOfStandardSupport}T23:59:59Z`) - now.getTime()) / DAY_MS);
}

/**
 * The cluster engine for `engine` at its pinned version; throws when the version's standard support
 * ends within RETIREMENT_NOTICE_DAYS of `now`.
 */
export function clusterEngine(engine: AuroraEngine, now: Date = new Date()): rds.IClusterEngine {
  const pinned = ENGINE_VERSIONS[engine];
  const left = daysOfStandardSupportLeft(pinned, now);
  if (left < RETIREMENT_NOTICE_DAYS) {
    throw new Error(
      `Aurora ${engine} ${pinned.version} leaves standard support on ${pinned.endOfStandardSupport} (${left} days from now, fewer than ${RETIREMENT_NOTICE_DAYS}): ` +
        `pin a current minor in cdk/constructs/engine-versions.ts (see ${pinned.source})`,
    );
  }
  return engine === "postgres"
    ? rds.DatabaseClusterEngine.auroraPostgres({ version: rds.AuroraPostgresEngineVersion.of(pinned.version, pinned.major) })
    : rds.DatabaseClusterEngine.auroraMysql({ version: rds.AuroraMysqlEngineVersion.of(pinned.version, pinned.major) });
}
