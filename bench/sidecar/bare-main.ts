/**
 * Child of `npm run bench -- sidecar`: the baseline, a bare `node:http` pipe proxy
 * (bench/bare-pipe-proxy.ts) in a process of its own, in front of `127.0.0.1:PORT` (argv[2]).
 * Prints `PORT n` once listening; exits on SIGTERM.
 */
import { startBarePipe } from '../bare-pipe-proxy.js';

const { port } = await startBarePipe(Number(process.argv[2]));
console.log(`PORT ${port}`);
process.once('SIGTERM', () => process.exit(0));
