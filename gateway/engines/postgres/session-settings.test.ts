import { describe, expect, it } from "vitest";
import { SESSION_SETTINGS_SQL, sessionSettingsProblem, STARTUP_OPTIONS } from "./session-settings.js";

describe("session settings", () => {
  it("are sent to PostgreSQL as startup options and read back from Aurora DSQL in one query", () => {
    expect(STARTUP_OPTIONS).toBe("-c TimeZone=UTC -c DateStyle=ISO,MDY -c IntervalStyle=postgres -c standard_conforming_strings=on");
    expect(SESSION_SETTINGS_SQL).toBe(
      "SELECT current_setting('TimeZone'), current_setting('DateStyle'), current_setting('IntervalStyle'), current_setting('standard_conforming_strings')",
    );
  });

  it("accept UTC under its names, and name every setting that differs", () => {
    expect(sessionSettingsProblem(["UTC", "ISO, MDY", "postgres", "on"])).toBeUndefined();
    expect(sessionSettingsProblem(["Etc/UTC", "ISO, MDY", "postgres", "on"])).toBeUndefined();
    expect(sessionSettingsProblem(["Europe/London", "German, DMY", "postgres", "off"])).toBe(
      'the session\'s settings differ from what the gateway needs: TimeZone is "Europe/London" where the gateway reads values as UTC; DateStyle is "German, DMY" where the gateway reads values as ISO,MDY; standard_conforming_strings is "off" where the gateway reads values as on',
    );
  });
});
