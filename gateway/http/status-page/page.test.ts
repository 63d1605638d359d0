import vm from "node:vm";
import { beforeAll, describe, expect, it } from "vitest";
import { bundleStatusPage, type StatusPageAssets } from "./assets.js";
import { statusPageDocument, statusPageHtml } from "./page.js";

describe("the status page document", () => {
  let assets: StatusPageAssets;
  let html: string;

  beforeAll(async () => {
    assets = await bundleStatusPage();
    html = await statusPageHtml();
  });

  it("inlines the browser sources bundled by esbuild: one script that parses as JavaScript, and the style sheet", () => {
    expect(() => new vm.Script(assets.script)).not.toThrow();
    expect(html).toContain(assets.script);
    expect(html).toContain(assets.css);
    expect(assets.css).toContain("--primary:");
    // One function scope: nothing of the page's leaks into the window's globals.
    expect(assets.script.trimStart()).toMatch(/^"use strict";\s*\(\(\) => \{|^\(\(\) => \{/);
  });

  it("loads nothing from elsewhere: no external URL, no src or href but the inline icon", () => {
    const urls = html.match(/https?:\/\/[^\s"')]+/g) ?? [];
    expect(urls.filter((url) => url !== "http://www.w3.org/2000/svg")).toEqual([]);
    expect(html).not.toMatch(/\ssrc=/);
    expect(html.match(/\shref="[^"]*"/g)).toEqual([' href="data:,"']);
  });

  it("never parses strings as HTML or code, which the page's CSP and escaping rule out", () => {
    for (const forbidden of ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout(\""]) {
      expect(assets.script).not.toContain(forbidden);
    }
  });

  it("refuses a script or style sheet that would end its element early", () => {
    expect(() => statusPageDocument({ script: 'console.log("</script>")', css: "" })).toThrow(/<\/script/);
    expect(() => statusPageDocument({ script: "", css: "/* </style> */" })).toThrow(/<\/style/);
  });
});
