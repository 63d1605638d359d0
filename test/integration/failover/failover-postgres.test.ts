import { startPgFailoverPair } from "../../support/failover-pair.js";
import { defineFailoverSuite } from "./failover-suite.js";

defineFailoverSuite({ name: "a PostgreSQL primary and its synchronous standby", start: startPgFailoverPair });
