/** The wire contract shared by the gateway and the client SDK. */
export * from "./errors.js";
export * from "./health.js";
export * from "./query.js";
