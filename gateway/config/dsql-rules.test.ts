import { describe, expect, it } from "vitest";
import { parseConfig } from "./load.js";
import type { GatewayConfigInput } from "./schema.js";

const ENDPOINT = "postgres://abcdefghijklmnopqrstuvwxyz.dsql.us-east-1.on.aws:5432/postgres";
type ClusterInput = NonNullable<GatewayConfigInput["clusters"]>[string];

const dsql = (extra: Partial<ClusterInput> = {}, rest: GatewayConfigInput = {}) =>
  parseConfig({ ...rest, clusters: { default: { writerUrl: ENDPOINT, credentials: { source: "dsql" }, ...extra } } });

describe("an Aurora DSQL cluster in the configuration", () => {
  it("is a writer URL and credentials from DSQL tokens, with the admin role by default", () => {
    const config = dsql();
    expect(config.clusters.default?.credentials).toEqual({ source: "dsql", username: "admin" });
    expect(dsql({ credentials: { source: "dsql", username: "poolgate_app", region: "us-east-1" } }).clusters.default?.credentials).toEqual({
      source: "dsql",
      username: "poolgate_app",
      region: "us-east-1",
    });
  });

  it("has no replicas or instances: readerUrls and discovery are refused with the reason", () => {
    expect(() => dsql({ readerUrls: [ENDPOINT] })).toThrow(/clusters\.default\.readerUrls: Aurora DSQL is one regional endpoint with no replicas/);
    expect(() => dsql({ discovery: { instanceHostPattern: "?.example" } })).toThrow(/clusters\.default\.discovery: Aurora DSQL has no instances to discover/);
  });

  it("always uses TLS: mode disable and TLS chosen in the URL are refused", () => {
    expect(() => dsql({ tls: { mode: "disable" } })).toThrow(/clusters\.default\.tls\.mode: Aurora DSQL accepts TLS connections only/);
    expect(() => parseConfig({ clusters: { default: { writerUrl: `${ENDPOINT}?sslmode=disable`, credentials: { source: "dsql" } } } })).toThrow(
      /clusters\.default\.writerUrl: chooses TLS \(sslmode\); an Aurora DSQL cluster always uses TLS/,
    );
    expect(dsql({ tls: { mode: "require" } }).clusters.default?.tls).toEqual({ mode: "require" });
  });

  it("speaks PostgreSQL only", () => {
    expect(() => parseConfig({ clusters: { default: { writerUrl: "mysql://abc.dsql.us-east-1.on.aws/postgres", credentials: { source: "dsql" } } } })).toThrow(
      /writerUrl: Aurora DSQL speaks PostgreSQL/,
    );
  });

  it("logs in with DSQL tokens only, for every login of the cluster", () => {
    const config = dsql({ logins: { readOnly: { source: "dsql", username: "poolgate_ro" }, principals: { billing: { source: "dsql", username: "billing" } } } });
    expect(config.clusters.default?.logins?.readOnly).toEqual({ source: "dsql", username: "poolgate_ro" });
    expect(() => dsql({ logins: { readOnly: { source: "password", username: "ro", password: "x" } } })).toThrow(
      /clusters\.default\.logins\.readOnly\.source: Aurora DSQL logs in with IAM tokens only/,
    );
    expect(() => dsql({ logins: { principals: { billing: { source: "iam", username: "billing" } } } })).toThrow(
      /clusters\.default\.logins\.principals\.billing\.source: Aurora DSQL logs in with IAM tokens only/,
    );
  });

  it("refuses a DSQL login on a cluster that is not a DSQL one", () => {
    expect(() =>
      parseConfig({ clusters: { default: { writerUrl: "postgres://u:p@db.example/app", logins: { readOnly: { source: "dsql", username: "ro" } } } } }),
    ).toThrow(/logins\.readOnly\.source: an Aurora DSQL login needs the cluster to be an Aurora DSQL one/);
  });

  it("retires pooled sessions before DSQL's 60-minute connection limit", () => {
    expect(dsql().pool.maxLifetimeMs).toBe(1800000);
    expect(dsql({}, { pool: { maxLifetimeMs: 3300000 } }).pool.maxLifetimeMs).toBe(3300000);
    expect(() => dsql({}, { pool: { maxLifetimeMs: 0 } })).toThrow(/pool\.maxLifetimeMs: Aurora DSQL ends every connection after 60 minutes \(cluster default\)/);
    expect(() => dsql({}, { pool: { maxLifetimeMs: 3600000 } })).toThrow(/set it between 1000 and 3300000 \(55 minutes\).*it is 3600000/);
    // Without a DSQL cluster, sessions may live forever.
    expect(parseConfig({ clusters: { default: { writerUrl: "postgres://u:p@db.example/app" } }, pool: { maxLifetimeMs: 0 } }).pool.maxLifetimeMs).toBe(0);
  });

  it("refuses Data API secrets that stand for a password login on a DSQL cluster", () => {
    const resource = "arn:aws:rds:us-east-1:123456789012:cluster:app";
    const secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:app-AbCdEf";
    expect(dsql({}, { dataApi: { resources: { [resource]: { cluster: "default", secrets: { [secret]: {} } } } } }).dataApi.resources[resource]?.cluster).toBe("default");
    expect(() => dsql({}, { dataApi: { resources: { [resource]: { cluster: "default", secrets: { [secret]: { username: "app", password: "pw" } } } } } })).toThrow(
      /dataApi\.resources\..*\.secrets\..*: cluster default is an Aurora DSQL one, which logs in with IAM tokens only/,
    );
  });
});
