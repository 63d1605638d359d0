/**
 * Reads MySQL/MariaDB text for the gateway's questions (sql-analysis.ts) with MySQL's exact lexical
 * rules (sql-lexer.ts), under every reading the session's sql_mode and the server's version allow: an
 * answer counts only where all readings agree on the statements, else the text gets the careful
 * answers. What is not recognised takes the careful path: unknown statements may end a transaction,
 * unknown functions may leave session state.
 */
import { cachedReader, NOT_UNDERSTOOD, type SqlReader, type StatementAnalysis, type TransactionStatement } from "../sql-analysis.js";
import { lexModesFor, lexMysql, splitStatements, type Token } from "./sql-lexer.js";
import { mysqlFingerprint } from "./digest.js";
import { isDeterministicFunction, refusedForReadOnly, isStatelessFunction, SESSION_VALUE_WORDS, WRITING_FUNCTIONS } from "./functions.js";

const isAscii = (text: string): boolean => [...text].every((ch) => ch.charCodeAt(0) < 0x80);
const READ_LEADING = new Set(["select", "with", "values", "table", "show", "describe", "desc", "explain", "help"]);
const MODIFYING = new Set(["insert", "update", "delete", "replace"]);
/**
 * Statements that neither begin nor end a transaction nor commit implicitly. Everything else (DDL,
 * LOCK TABLES, GRANT, FLUSH, BEGIN NOT ATOMIC blocks... and whatever is not listed) counts as ending one.
 */
const KEEPS_TRANSACTION = new Set([
  ...READ_LEADING,
  ...MODIFYING,
  "do",
  "call",
  "savepoint",
  "release",
  "handler",
  "load",
  "prepare",
  "execute",
  "deallocate",
  "use",
  "kill",
  "checksum",
  "signal",
  "resignal",
  "get",
  "set",
]);
/** After `for` in a SELECT: row locks. */
const LOCK_WORDS = new Set(["update", "share"]);
/** Words that a `(` may follow without the word being a function. */
const NOT_FUNCTIONS = new Set([
  "values", "value", "in", "exists", "any", "all", "some", "on", "using", "as", "over", "partition", "key", "index", "primary",
  "unique", "foreign", "references", "check", "default", "with", "select", "from", "where", "and", "or", "not", "when", "then",
  "else", "case", "window", "table", "join", "row", "rows", "by", "having", "into", "lateral", "recursive", "union", "intersect",
  "except", "set", "is", "like", "between", "xor", "div", "mod", "returning", "limit", "offset", "distinct", "explain", "insert",
  "replace", "update", "delete", "describe", "desc", "call", "do", "if",
]);

interface StatementFacts {
  /** Only words, identifiers and numbers: nothing (a string, a comment marker) that reads differently by mode. */
  plainTokens: boolean;
  first: string;
  /** The words after the first, for sub-kinds (CREATE TEMPORARY, ROLLBACK TO...). */
  words: string[];
  functions: string[];
  usesUserVariables: boolean;
  usesSystemVariables: boolean;
  into: boolean;
  locks: boolean;
}

function factsOf(tokens: readonly Token[]): StatementFacts {
  const start = tokens.findIndex((token) => !(token.kind === "symbol" && token.text === "("));
  const words: string[] = [];
  const functions: string[] = [];
  let usesUserVariables = false;
  let usesSystemVariables = false;
  let into = false;
  let locks = false;
  for (let i = Math.max(0, start); i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.kind === "variable") usesUserVariables = true;
    if (token.kind === "system-variable") usesSystemVariables = true;
    if (token.kind === "system-variable") words.push(token.text.slice(token.text.lastIndexOf(".") + 1).replace(/^@@/, ""));
    if (token.kind !== "word" && token.kind !== "identifier") continue;
    const name = token.kind === "word" ? token.text : token.text.slice(1, -1).replace(/``|""/g, (pair) => pair[0] as string).toLowerCase();
    const following = tokens[i + 1];
    const previous = tokens[i - 1];
    const afterDot = previous?.kind === "symbol" && previous.text === ".";
    if (following?.kind === "symbol" && following.text === "(" && !(token.kind === "word" && NOT_FUNCTIONS.has(name)) && previous?.text !== "into") {
      functions.push(afterDot ? `.${name}` : name);
    }
    if (token.kind !== "word") continue;
    words.push(name);
    if (name === "into" && READ_LEADING.has(words[0] ?? "")) into = true;
    if (name === "for" && following?.kind === "word" && LOCK_WORDS.has(following.text)) locks = true;
    if (name === "lock" && following?.text === "in") locks = true;
  }
  const plainTokens = tokens.every((token) => token.kind === "word" || token.kind === "identifier" || token.kind === "number");
  return { plainTokens, first: words[0] ?? "", words: words.slice(1), functions, usesUserVariables, usesSystemVariables, into, locks };
}

function isTemporaryDdl(facts: StatementFacts): boolean {
  if (facts.first !== "create" && facts.first !== "drop") return false;
  const [a, b, c] = facts.words;
  return a === "temporary" || (a === "or" && b === "replace" && c === "temporary");
}

/** BEGIN, START TRANSACTION, COMMIT, ROLLBACK (not ROLLBACK TO), XA, SET autocommit. */
function isTransactionControl(facts: StatementFacts): boolean {
  switch (facts.first) {
    case "begin":
    case "commit":
    case "xa":
      return true;
    case "start":
      return facts.words[0] === "transaction";
    case "rollback":
      return !(facts.words[0] === "to" || (facts.words[0] === "work" && facts.words[1] === "to"));
    case "set":
      return facts.words.includes("autocommit");
    default:
      return false;
  }
}

/** START TRANSACTION's characteristics, as word runs (the commas between them are not words). */
const START_CHARACTERISTICS = [["with", "consistent", "snapshot"], ["read", "only"], ["read", "write"]];

function startsTransactionWith(words: readonly string[]): { readOnly: boolean } | undefined {
  let readOnly = false;
  for (let at = 0; at < words.length; ) {
    const run = START_CHARACTERISTICS.find((candidate) => candidate.every((word, i) => words[at + i] === word));
    if (run === undefined) return undefined;
    if (run[1] === "only") readOnly = true;
    at += run.length;
  }
  return { readOnly };
}

/**
 * BEGIN [WORK], START TRANSACTION [characteristics], COMMIT [WORK], ROLLBACK [WORK]; anything more
 * (AND CHAIN, RELEASE, TO SAVEPOINT, BEGIN NOT ATOMIC) is not one of them.
 */
function transactionStatementOf(facts: StatementFacts): TransactionStatement | undefined {
  const bare = facts.words.length === 0 || (facts.words.length === 1 && facts.words[0] === "work");
  switch (facts.first) {
    case "begin":
      return bare ? { verb: "begin", readOnly: false } : undefined;
    case "start": {
      if (facts.words[0] !== "transaction") return undefined;
      const started = startsTransactionWith(facts.words.slice(1));
      return started === undefined ? undefined : { verb: "begin", readOnly: started.readOnly };
    }
    case "commit":
      return bare ? { verb: "commit" } : undefined;
    case "rollback":
      return bare ? { verb: "rollback" } : undefined;
    default:
      return undefined;
  }
}

/** What the gateway may assume a statement does; every flag leans careful. */
interface Verdict {
  transactionStatement: TransactionStatement | undefined;
  savepoint: boolean;
  transactionControl: boolean;
  reads: boolean;
  endsTransaction: boolean;
  leavesNoState: boolean;
  readOnlyRefusal: string | undefined;
  knownFunctionsOnly: boolean;
  deterministic: boolean;
}

function readsOnly(facts: StatementFacts): boolean {
  // DO evaluates expressions and discards their values: it reads as SELECT does (its functions are judged the same way), unless it assigns a user variable.
  if (facts.first === "do") return !facts.usesUserVariables;
  if (!READ_LEADING.has(facts.first) || facts.into || facts.locks) return false;
  if (facts.first === "with" && facts.words.some((word) => MODIFYING.has(word))) return false;
  if (facts.first === "explain" && facts.words[0] === "analyze") return !facts.words.some((word) => MODIFYING.has(word));
  return true;
}

function verdictOf(facts: StatementFacts, writingFunctions: ReadonlySet<string>): Verdict {
  const transactionControl = isTransactionControl(facts);
  const keeps = KEEPS_TRANSACTION.has(facts.first) || isTemporaryDdl(facts) || (facts.first === "rollback" && !transactionControl);
  const reads = readsOnly(facts) && !facts.functions.some((name) => writingFunctions.has(name));
  const plain = readsOnly(facts) || MODIFYING.has(facts.first);
  const leavesNoState = plain && !facts.usesUserVariables && facts.functions.every(isStatelessFunction);
  const savepoint = facts.first === "savepoint" || facts.first === "release" || (facts.first === "rollback" && !transactionControl);
  let readOnlyRefusal: string | undefined;
  if (!readsOnly(facts) && !savepoint) readOnlyRefusal = `${facts.first.toUpperCase() || "these"} statements`;
  else if (facts.functions.some(refusedForReadOnly)) readOnlyRefusal = "named locks, waits and server files (GET_LOCK, LOAD_FILE...)";
  const knownFunctionsOnly = facts.functions.every(isStatelessFunction);
  const deterministic =
    facts.first === "select" &&
    reads &&
    !facts.usesUserVariables &&
    !facts.usesSystemVariables &&
    !facts.words.some((word) => SESSION_VALUE_WORDS.has(word)) &&
    facts.functions.every(isDeterministicFunction);
  return {
    transactionStatement: transactionStatementOf(facts),
    savepoint: savepoint && facts.plainTokens,
    transactionControl,
    reads,
    endsTransaction: transactionControl || !keeps,
    leavesNoState,
    readOnlyRefusal,
    knownFunctionsOnly,
    deterministic,
  };
}

/**
 * Every reading's statements, with the flags of all of them together: a statement counts as ending a
 * transaction, writing, holding state or being refused if any reading says so. A reading that fails
 * part-way (an unterminated quote in that sql_mode) contributes the statements before the failure,
 * which the server would run before refusing the rest.
 */
function analyse(sql: string, writingFunctions: ReadonlySet<string>): StatementAnalysis {
  const verdicts: Verdict[] = [];
  const functions = new Set<string>();
  let statementCount = 0;
  let fullReadings = 0;
  let lexError: string | undefined;
  for (const mode of lexModesFor(sql)) {
    const lexed = lexMysql(sql, mode);
    let statements = splitStatements(lexed.tokens);
    if (lexed.error === undefined) fullReadings++;
    else {
      lexError = lexed.error;
      // The statement the failure is in never runs.
      if (lexed.tokens.at(-1)?.kind !== "semicolon") statements = statements.slice(0, -1);
    }
    statementCount = Math.max(statementCount, statements.length);
    for (const statement of statements.map(factsOf)) {
      for (const name of statement.functions) functions.add(name);
      verdicts.push(verdictOf(statement, writingFunctions));
    }
  }
  if (fullReadings === 0) return { ...NOT_UNDERSTOOD, readOnlyRefusal: `statements the gateway cannot read (${lexError ?? "no statement"})` };
  const endsTransaction = verdicts.some((verdict) => verdict.endsTransaction);
  const transactionStatement = statementCount === 1 ? agreedTransactionStatement(verdicts) : undefined;
  return {
    ...(transactionStatement === undefined ? {} : { transactionStatement }),
    understood: true,
    statementCount: Math.max(1, statementCount),
    intent: verdicts.length > 0 && verdicts.every((verdict) => verdict.reads) ? "read" : "write",
    endsTransaction,
    transactionControl: verdicts.some((verdict) => verdict.transactionControl),
    // In autocommit every statement commits on its own: a string of several may fail after the first.
    commitsInParts: endsTransaction || statementCount > 1,
    readOnlyRefusal: verdicts.find((verdict) => verdict.readOnlyRefusal !== undefined)?.readOnlyRefusal,
    leavesNoState: verdicts.every((verdict) => verdict.leavesNoState),
    functions: [...functions],
    // ASCII only: in a multi-byte client charset (SET NAMES gbk) a byte of a non-ASCII character can
    // swallow the quote or backtick after it.
    savepointOnly: statementCount === 1 && verdicts.every((verdict) => verdict.savepoint) && isAscii(sql),
    // The lexer does not find a statement's tables: every MySQL write invalidates as one of unknown tables.
    tables: undefined,
    knownFunctionsOnly: verdicts.every((verdict) => verdict.knownFunctionsOnly),
    deterministic: statementCount === 1 && verdicts.length > 0 && verdicts.every((verdict) => verdict.deterministic),
  };
}

/** The one transaction statement every reading agrees the text is, or undefined. */
function agreedTransactionStatement(verdicts: readonly Verdict[]): TransactionStatement | undefined {
  const first = verdicts[0]?.transactionStatement;
  if (first === undefined) return undefined;
  const same = verdicts.every(({ transactionStatement: other }) => other !== undefined && other.verb === first.verb && ("readOnly" in other ? other.readOnly : undefined) === ("readOnly" in first ? first.readOnly : undefined));
  return same ? first : undefined;
}

/** A reader for one cluster: the built-in writing functions plus `routing.writingFunctions`. */
export function mysqlSqlReader(writingFunctions: readonly string[] = []): SqlReader {
  const names = new Set([...WRITING_FUNCTIONS, ...writingFunctions.map((name) => name.toLowerCase())]);
  return cachedReader((sql) => analyse(sql, names), mysqlFingerprint);
}
