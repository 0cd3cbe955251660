/** The tests' free ports are the product's (src/redis/free-port.ts): out of the ephemeral range, and reserved across processes. */
export { freePort } from '../../src/redis/free-port.js';
