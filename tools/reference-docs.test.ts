import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configurationRows, REFERENCE_PAGES, repositoryFile } from "./reference-docs.js";

describe("the generated reference pages", () => {
  for (const page of REFERENCE_PAGES) {
    it(`${page.path} is what npm run docs writes from its source`, () => {
      expect(readFileSync(repositoryFile(page.path), "utf8"), `${page.path} drifted from its source: run npm run docs`).toBe(page.text());
    });
  }

  it("give every configuration key a meaning", () => {
    const rows = configurationRows();
    expect(rows.length).toBeGreaterThan(20);
    for (const row of rows) expect(row.meaning.trim(), `meaning of ${row.key}`).not.toBe("");
  });
});
