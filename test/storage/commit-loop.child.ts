// Child of open-store.test.ts: commits forever, printing each commit number after it returns,
// until the parent kills it with SIGKILL.
import { openStore } from '../../src/storage/open-store.js';
import { makeFinding } from './make-finding.js';

const path = process.argv[2]!;
const store = openStore({ path });
for (let n = 0; ; n++) {
  const findings = [makeFinding({ id: `f${n}`, detectedAtMs: 10_000 + n })];
  const states = [{ key: `s${n % 50}`, state: JSON.stringify({ n }) }];
  store.commit({ findings, states });
  process.stdout.write(`${n}\n`);
  if (n % 20 === 0) await new Promise((r) => setImmediate(r));
}
