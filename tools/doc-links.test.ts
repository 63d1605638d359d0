/**
 * The README, CONTRIBUTING.md and docs/ link to each other by file and heading: every relative link
 * must name a file that exists, and a #fragment a heading of that page (GitHub's anchors), so that
 * moving a section never leaves a link behind.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repositoryFile } from "./reference-docs.js";

const root = repositoryFile("");
const pages = ["README.md", "CONTRIBUTING.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

/** Markdown outside fenced code blocks. */
function prose(text: string): string {
  return text.split(/^```.*$/m).filter((_, index) => index % 2 === 0).join("\n");
}

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    const base = (match[1] ?? "").toLowerCase().replaceAll(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

describe("links between the README, CONTRIBUTING.md and docs/", () => {
  for (const page of pages) {
    it(`${page} links only to files and headings that exist`, () => {
      const text = readFileSync(join(root, page), "utf8");
      const links = [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] ?? "");
      for (const link of links.filter((target) => !/^[a-z]+:/.test(target))) {
        const [path = "", fragment] = link.split("#");
        const target = path === "" ? join(root, page) : join(root, dirname(page), path);
        expect(existsSync(target), `${page}: ${link} names no file`).toBe(true);
        if (fragment !== undefined && target.endsWith(".md")) {
          expect(anchorsOf(readFileSync(target, "utf8")).has(fragment), `${page}: ${link} names no heading of ${relative(root, target)}`).toBe(true);
        }
      }
    });
  }
});
