/**
 * Writes src/events/schema-plans.generated.ts (see schema-plans-source.ts). Run it after changing a schema:
 * `npm run generate:schema-plans` (in packages/core); the test beside the generated module fails until then.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SCHEMA_PLANS_MODULE, schemaPlansSource } from './schema-plans-source.js';

const target = fileURLToPath(SCHEMA_PLANS_MODULE);
writeFileSync(target, await schemaPlansSource());
console.log(`wrote ${target}`);
