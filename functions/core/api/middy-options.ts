/**
 * No early answer before the function's time-out (middy's default answers 5 ms before it and lets
 * the work go on): locks and idempotency claims last until the deadline because the function
 * cannot run past it, and work that outlived an early answer would resume in the environment's
 * next invocation, after a retry may have taken its place. Lambda ends a function that reaches its
 * time-out, and API Gateway then answers with an error of its own.
 */
export const runUntilKilled = { timeoutEarlyInMillis: 0 };
