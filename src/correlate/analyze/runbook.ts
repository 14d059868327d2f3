/** Runbook anchors the summaries point to (docs/runbook.md; test/ops ties alerts to them). */
export const RUNBOOK_FORK = 'docs/runbook.md#mcpsessionforkdetected';
export const RUNBOOK_ORPHAN = 'docs/runbook.md#mcporphanedprogresstokens';
export const RUNBOOK_DUPLICATE = 'docs/runbook.md#mcpduplicatetoolexecution';
export const RUNBOOK_ORPHANED_REQUEST = 'docs/runbook.md#mcporphanedrequests';
