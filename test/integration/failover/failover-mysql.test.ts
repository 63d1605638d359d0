import { startMariaDbFailoverPair } from "../../support/failover-pair.js";
import { defineFailoverSuite } from "./failover-suite.js";

defineFailoverSuite({ name: "a MariaDB primary and its semi-synchronous replica (MySQL engine)", start: startMariaDbFailoverPair });
