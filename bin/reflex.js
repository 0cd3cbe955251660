#!/usr/bin/env node
// Runs the TypeScript CLI without a build step: tsx registers its loader, then the CLI is imported.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/entry.ts');
await main(process.argv);
