import type { ScenarioResult } from './types.js';

/**
 * Why the detector reports fewer mints behind `forkwatch proxy` than the server rehydrated: the
 * sidecar sees only the wire. A new life shows there when its events arrive with ids restarting
 * (e1 again); the proxy dates the mint at the request whose stream carried the first of them
 * (its `created_by`). A life that sent no event leaves nothing on the wire to report.
 */
export function wireViewNote(r: ScenarioResult): string[] {
  const lives = r.rehydrations ?? [];
  if (lives.length === 0) return [];
  const out = ['  what the sidecar proxy can see (only the wire): a rehydration shows when its events arrive with ids restarting at e1,'];
  out.push('  and the detector names the request whose stream carried the first of them (created_by), not the one that rehydrated it:');
  let visible = 0;
  for (const l of lives) {
    if (l.events === undefined) out.push(`    life ${l.life} (rehydrated on ${l.method}): still alive at the end of the run; visible if its events reached the client`);
    else if (l.events > 0) {
      visible++;
      out.push(`    life ${l.life} (rehydrated on ${l.method}): ${l.events} event(s) on the wire: one minted_on_resume`);
    } else out.push(`    life ${l.life} (rehydrated on ${l.method}): no event sent: nothing on the wire shows it, no finding`);
  }
  out.push(`  so expect ${visible} minted_on_resume for this session from the proxy, where the server's own spans (scenario 1) show each of the ${lives.length} rehydration(s)`);
  return out;
}
