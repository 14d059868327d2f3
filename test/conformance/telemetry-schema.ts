import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SpanRecord } from '../../src/model/span-record.js';

const DOC = fileURLToPath(new URL('../../docs/telemetry.md', import.meta.url));

/** What every span of a name must carry: the attributes a detector cannot do without. */
export const REQUIRED: Record<string, string[]> = {
  '*': ['forkwatch.schema.version', 'forkwatch.side'],
  'forkwatch.session.created': ['forkwatch.session.key', 'forkwatch.session.created_by', 'forkwatch.session.client_supplied_id', 'http.request.method'],
  'forkwatch.session.ended': ['forkwatch.session.key', 'forkwatch.session.end_reason'],
  'forkwatch.sse.event': ['forkwatch.session.key', 'forkwatch.sse.event.id', 'forkwatch.sse.payload.digest', 'forkwatch.sse.payload.bytes', 'forkwatch.jsonrpc.kind'],
  'forkwatch.resume': ['forkwatch.session.key', 'forkwatch.resume.last_event_id', 'http.request.method', 'http.response.status_code', 'forkwatch.resume.outcome'],
  'forkwatch.request.sent': ['mcp.method.name', 'jsonrpc.request.id'],
  'forkwatch.request.received': ['mcp.method.name', 'jsonrpc.request.id'],
  'forkwatch.request.settled': ['mcp.method.name', 'jsonrpc.request.id', 'forkwatch.request.outcome', 'forkwatch.request.duration_ms'],
  'forkwatch.guard.fork': ['forkwatch.guard.fork_kind'],
};

/** Attribute tables of docs/telemetry.md: those on every span, and each span's own (name -> type). */
export interface TelemetrySchema {
  common: Map<string, string>;
  spans: Map<string, Map<string, string>>;
}

/** Reads the tables from the doc itself, so the doc stays the contract. */
export function readSchema(doc = readFileSync(DOC, 'utf8')): TelemetrySchema {
  const common = new Map<string, string>();
  const spans = new Map<string, Map<string, string>>();
  let current: Array<Map<string, string>> = [];
  for (const line of doc.split('\n')) {
    if (/^#{2,3} /.test(line)) {
      if (line.includes('Attributes on every forkwatch span')) current = [common];
      else if (line.startsWith('### `forkwatch.')) {
        current = [...line.matchAll(/`(forkwatch\.[a-z_.]+)`/g)].map((m) => {
          if (!spans.has(m[1]!)) spans.set(m[1]!, new Map());
          return spans.get(m[1]!)!;
        });
      } else current = [];
      continue;
    }
    const row = /^\|\s*(`[^|]*`)\s*\|\s*([a-z]*)\s*\|/.exec(line);
    if (row && current.length > 0) {
      for (const m of row[1]!.matchAll(/`([a-z_.]+)`/g)) for (const t of current) t.set(m[1]!, row[2]!);
    }
  }
  return { common, spans };
}

function typeOk(type: string, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'int':
      return typeof v === 'number' && Number.isInteger(v);
    case 'double':
      return typeof v === 'number';
    case 'bool':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

/** `forkwatch.session.key` of a session id under a salt: first 32 hex of SHA-256(salt || id). */
export function sessionKey(id: string, salt: string): string {
  return createHash('sha256').update(salt, 'utf8').update(id, 'utf8').digest('hex').slice(0, 32);
}

/**
 * Every way one span departs from docs/telemetry.md ([] when none): a name the doc does not define,
 * a required attribute missing, an attribute outside its tables or of the wrong type, a string over
 * 256 chars, key/incarnation/digest shapes, the schema version and side, and the salt rule (a span
 * that records the raw `mcp.session.id` must carry SHA-256(salt || id) as its key).
 */
export function violations(span: SpanRecord, schema: TelemetrySchema, salt: string): string[] {
  const out: string[] = [];
  const { name } = span;
  const a = span.attributes as Record<string, unknown>;
  const own = schema.spans.get(name);
  if (!own) return [`${name}: not a span of docs/telemetry.md`];
  for (const req of [...REQUIRED['*']!, ...(REQUIRED[name] ?? [])]) if (!(req in a)) out.push(`${name}: required ${req} missing`);
  for (const [k, v] of Object.entries(a)) {
    const type = own.get(k) ?? schema.common.get(k);
    if (type === undefined) {
      out.push(`${name}: ${k} is not in its table`);
      continue;
    }
    if (!typeOk(type, v)) out.push(`${name}: ${k}=${JSON.stringify(v)} is not ${type}`);
    if (typeof v === 'string' && v.length > 256) out.push(`${name}: ${k} longer than 256`);
  }
  if (a['forkwatch.schema.version'] !== 1) out.push(`${name}: schema version ${String(a['forkwatch.schema.version'])}`);
  if (a['forkwatch.side'] !== 'client' && a['forkwatch.side'] !== 'server') out.push(`${name}: side ${String(a['forkwatch.side'])}`);
  const key = a['forkwatch.session.key'];
  if (key !== undefined && !/^[0-9a-f]{32}$/.test(String(key))) out.push(`${name}: session key ${String(key)} is not 32 lowercase hex`);
  const raw = a['mcp.session.id'];
  if (typeof raw === 'string' && key !== undefined && key !== sessionKey(raw, salt)) out.push(`${name}: session key is not SHA-256(salt || mcp.session.id)`);
  const inc = a['forkwatch.session.incarnation'];
  if (inc !== undefined && !/^[0-9a-f]{16}$/.test(String(inc))) out.push(`${name}: incarnation ${String(inc)} is not 16 lowercase hex`);
  const digest = a['forkwatch.sse.payload.digest'];
  if (digest !== undefined && !/^[0-9a-f]{16}$/.test(String(digest))) out.push(`${name}: payload digest ${String(digest)} is not 16 lowercase hex`);
  if (!/^[0-9a-f]{32}$/.test(span.traceId) || /^0+$/.test(span.traceId)) out.push(`${name}: trace id ${span.traceId} invalid`);
  if (!/^[0-9a-f]{16}$/.test(span.spanId) || /^0+$/.test(span.spanId)) out.push(`${name}: span id ${span.spanId} invalid`);
  return out;
}
