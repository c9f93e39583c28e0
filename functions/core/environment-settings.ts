/** The least, the most and the default of a whole-number setting. */
export interface WholeNumberLimits {
  fallback: number;
  min: number;
  max: number;
}

/** A setting's value: the fallback when unset, else a whole number within the limits (a string or a number). */
export function wholeNumberSetting(name: string, raw: unknown, { fallback, min, max }: WholeNumberLimits): number {
  if (raw === undefined || raw === '') return fallback;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${String(raw)}"`);
  }
  return value;
}

/**
 * A group of whole-number settings the stack sets on the functions, each from its environment
 * variable: read once per cold start, where a bad value fails.
 */
export function settingsFromEnvironment<Name extends string>(
  limits: Record<Name, WholeNumberLimits>,
  variables: Record<Name, string>,
): () => Record<Name, number> {
  let cached: Record<Name, number> | undefined;
  return () => {
    cached ??= Object.fromEntries(
      (Object.keys(limits) as Name[]).map((name) => [
        name,
        wholeNumberSetting(variables[name], process.env[variables[name]], limits[name]),
      ]),
    ) as Record<Name, number>;
    return cached;
  };
}
