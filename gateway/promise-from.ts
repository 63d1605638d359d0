/**
 * The hot path's steps are plain functions that answer with a promise (no async function's promise
 * and turn of their own). Called through `promiseFrom`, such a step fails one way only, as an async
 * function would: a synchronous throw becomes its rejection, with the value thrown, untouched.
 */
export function promiseFrom<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (err) {
    // What was thrown is passed on as it is, Error or not, as an async function's rejection would be.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(err);
  }
}
