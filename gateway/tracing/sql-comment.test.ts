import { describe, expect, it } from "vitest";
import { sqlComment } from "./sql-comment.js";

describe("sqlcommenter comments", () => {
  it("sorts keys, URL-encodes values and quotes them", () => {
    expect(sqlComment({ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", route: "POST /v1/query", principal: "arn:aws:iam::1:role/app" })).toBe(
      "/*principal='arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fapp',route='POST%20%2Fv1%2Fquery',traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'*/",
    );
  });

  it("escapes a quote and can never close the comment early or open a nested one", () => {
    const comment = sqlComment({ principal: "o'brien*/ /* DROP TABLE x" });
    expect(comment).toBe("/*principal='o\\'brien*%2F%20%2F*%20DROP%20TABLE%20x'*/");
    expect(comment.slice(2, -2)).not.toContain("*/");
    expect(comment.slice(2, -2)).not.toContain("/*");
  });

  it("leaves out empty values, and is empty with none", () => {
    expect(sqlComment({ principal: "", route: "r" })).toBe("/*route='r'*/");
    expect(sqlComment({ principal: "" })).toBe("");
  });
});
