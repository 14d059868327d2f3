/**
 * `npm run bench -- fleet` (bench/run.ts runs this from the sources under tsx: it drives
 * test/e2e helpers and the app's TypeScript). Prints the table of bench/fleet/fleet-table.ts;
 * exit 1 when a fork went unfound or a finding was false.
 */
import { runFleet } from './fleet/run-fleet.js';
import { fleetTable } from './fleet/fleet-table.js';

const r = await runFleet(undefined, (l) => console.log(l));
for (const line of fleetTable(r)) console.log(line);
if (r.score.found !== r.score.forks || r.score.falseFindings.length > 0 || r.score.forks === 0 && r.options.forks > 0) process.exitCode = 1;
