import { lambdaSyncPayloadBytes } from '#functions/core/aws-limits.ts';

/**
 * The bytes Lambda counts for a function's result: the result object (status, headers, body…) as
 * JSON, as the Node.js runtime sends it. Over lambdaSyncPayloadBytes, Lambda refuses it and API
 * Gateway answers its own bare 500.
 */
export const resultBytes = (result: unknown): number => Buffer.byteLength(JSON.stringify(result));

export const fitsOneResult = (result: unknown): boolean => resultBytes(result) <= lambdaSyncPayloadBytes;

/**
 * The largest count below `total` for which `fits(count)` holds (0 when none does), `fits(total)`
 * being known false. Sizes grow with the count, so bisection finds it in log2(total) measures.
 */
export function mostThatFit(total: number, fits: (count: number) => boolean): number {
  let fitting = 0;
  let tooMany = total;
  while (tooMany - fitting > 1) {
    const middle = Math.floor((fitting + tooMany) / 2);
    if (fits(middle)) fitting = middle;
    else tooMany = middle;
  }
  return fitting === 0 || !fits(fitting) ? 0 : fitting;
}

export const megabytes = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
