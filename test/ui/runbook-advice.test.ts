import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FINDING_KINDS } from '../../src/http/api-findings-query.js';
import { RUNBOOK_ADVICE, RUNBOOK_URL, adviceFor, runbookLink } from '../../src/ui/runbook-advice.js';

const RUNBOOK = readFileSync(new URL('../../docs/runbook.md', import.meta.url), 'utf8');
/** `## Heading` -> GitHub's anchor: lower case, spaces to dashes, punctuation dropped. */
const sections = new Map<string, string>();
for (const part of RUNBOOK.split(/^## /m).slice(1)) {
  const heading = part.slice(0, part.indexOf('\n')).trim();
  sections.set(heading.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-'), part.slice(part.indexOf('\n') + 1));
}

test('every finding kind has advice that links an existing runbook section, with the alert named there', () => {
  for (const kind of FINDING_KINDS) {
    const a = RUNBOOK_ADVICE[kind];
    assert.ok(a, `${kind} has advice`);
    assert.ok(sections.has(a.anchor), `docs/runbook.md has #${a.anchor}`);
    assert.equal(runbookLink(kind), `${RUNBOOK_URL}#${a.anchor}`);
    assert.ok(a.steps.length > 0 && a.steps[0]!.startsWith('Open the timeline'), `${kind}: first step opens the timeline`);
  }
  assert.equal(adviceFor('some_future_kind').anchor, '');
  assert.equal(runbookLink('some_future_kind'), RUNBOOK_URL);
});

test("each fork section of the runbook starts with \"Open the finding's timeline\"", () => {
  const anchors = new Set(FINDING_KINDS.map((k) => RUNBOOK_ADVICE[k]!.anchor));
  assert.ok(anchors.size >= 2);
  for (const anchor of anchors) {
    const body = sections.get(anchor)!.trimStart();
    assert.ok(body.startsWith("**Open the finding's timeline**"), `#${anchor} starts with it: ${body.slice(0, 80)}`);
  }
});
