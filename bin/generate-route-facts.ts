/** `npm run generate` (with the validators): writes functions/core/api/route-facts.generated.ts (see tools/route-facts.ts). */
import { writeFileSync } from 'node:fs';
import { generateRouteFactsModule, routeFactsFile } from '#tools/route-facts.ts';

writeFileSync(routeFactsFile, await generateRouteFactsModule());
console.log(`wrote ${routeFactsFile}`);
