import { measureBundles } from '#bench/bundles.ts';
const m = await measureBundles(process.cwd(), process.env);
const sorted = m.bundles.sort((a, b) => b.bytes - a.bytes);
console.log(m.bundles.length, sorted.slice(0, 8).map((b) => `${b.functionId} ${(b.bytes / 1024).toFixed(1)} KB`).join('\n'));
