/**
 * The hot path's steps are plain functions that answer with a promise (no async function's promise
 * and turn of their own). Called through `promiseFrom`, such a step fails one way only, as an async
 * function would: a synchronous throw becomes its rejection, with the value thrown, untouched. The
 * step's one argument is passed along, so that calling it needs no closure of its own.
 */
export function promiseFrom<T>(start: () => Promise<T>): Promise<T>;
export function promiseFrom<A, T>(start: (arg: A) => Promise<T>, arg: A): Promise<T>;
export function promiseFrom<A, T>(start: (arg?: A) => Promise<T>, arg?: A): Promise<T> {
  try {
    return start(arg);
  } catch (err) {
    // What was thrown is passed on as it is, Error or not, as an async function's rejection would be.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(err);
  }
}
