/**
 * The Node.js version README promises is one every installed package accepts: `npm ci` on it prints no
 * EBADENGINE warning, and no dependency of the twin or the tests refuses it at run time. (fauxqs's
 * fastify brought light-my-request 6.8, whose cookie 2 wants Node.js 22: package.json's `overrides`
 * pins light-my-request 6.6, on cookie 1.)
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { expect, test } from 'vitest';

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[] }>;
};
const oldestNode = semver.minVersion(manifest.engines.node)?.version ?? '';

test("README's Node.js version is package.json's engines", () => {
  expect(oldestNode).toBe('20.19.0');
  expect(readFileSync('README.md', 'utf8')).toContain('Node.js 20.19+');
});

test('every package the lockfile installs accepts the oldest Node.js the project supports', () => {
  const refusing = Object.entries(lock.packages).flatMap(([path, { engines }]) => {
    // Very old packages wrote engines as a list; npm ignores that form.
    const range = Array.isArray(engines) ? undefined : engines?.node;
    return path && range && !semver.satisfies(oldestNode, range) ? [`${path} wants ${range}`] : [];
  });
  expect(refusing).toEqual([]);
});
