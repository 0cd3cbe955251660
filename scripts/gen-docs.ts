import { writeFileSync } from 'node:fs';
import { referenceMarkdown } from '../src/cli/reference.js';

writeFileSync(new URL('../docs/reference.md', import.meta.url), await referenceMarkdown());
process.stdout.write('docs/reference.md written\n');
