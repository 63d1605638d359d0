import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { STATUS_PAGE_HTML, STATUS_PAGE_SCRIPT } from "./page.js";

describe("the status page document", () => {
  it("carries a script that parses as JavaScript", () => {
    expect(() => new vm.Script(STATUS_PAGE_SCRIPT)).not.toThrow();
  });

  it("loads nothing from elsewhere: no external URL, no src or href but the inline icon", () => {
    const urls = STATUS_PAGE_HTML.match(/https?:\/\/[^\s"')]+/g) ?? [];
    expect(urls.filter((url) => url !== "http://www.w3.org/2000/svg")).toEqual([]);
    expect(STATUS_PAGE_HTML).not.toMatch(/\ssrc=/);
    expect(STATUS_PAGE_HTML.match(/\shref="[^"]*"/g)).toEqual([' href="data:,"']);
  });

  it("never parses strings as HTML or code, which the page's CSP and escaping rule out", () => {
    for (const forbidden of ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout(\""]) {
      expect(STATUS_PAGE_SCRIPT).not.toContain(forbidden);
    }
  });
});
