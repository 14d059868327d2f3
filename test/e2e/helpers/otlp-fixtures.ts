import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Captured OTLP JSON of the demo's scenarios (test/fixtures/capture-scenarios.ts writes them). */
export type Capture = 'seed-naive-stock' | 'seed-guarded-guarded' | 'healthy-resume';

interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean };
}
interface Span {
  traceId: string;
  spanId: string;
  name: string;
  attributes: KeyValue[];
}
interface ExportRequest {
  resourceSpans: Array<{ resource: { attributes: KeyValue[] }; scopeSpans: Array<{ spans: Span[] }> }>;
}

/** The capture's lines, one ExportTraceServiceRequest each. */
export function readCapture(name: Capture): string[] {
  return readFileSync(new URL(`../../fixtures/otlp/${name}.jsonl`, import.meta.url), 'utf8').split('\n').filter((l) => l.trim() !== '');
}

function spans(lines: readonly string[]): Span[] {
  return lines.flatMap((l) => (JSON.parse(l) as ExportRequest).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
}

const attr = (s: Span, key: string): string | undefined => s.attributes.find((a) => a.key === key)?.value.stringValue;

/** Session keys that saw a resume, in order of appearance: the sessions whose timelines matter. */
export function resumedSessionKeys(lines: readonly string[]): string[] {
  const keys = spans(lines).filter((s) => s.name === 'forkwatch.resume').map((s) => attr(s, 'forkwatch.session.key'));
  return [...new Set(keys.filter((k): k is string => k !== undefined))];
}

/** What a hostile client or server can put in the strings it emits. */
export const HOSTILE_MARKUP = `<script>alert("x")</script>'"]]>`;

/**
 * The same capture, made hostile: tool names and SSE event ids (and Last-Event-IDs, so the
 * correlation still holds) carry markup, quotes and a CDATA end; the service name is marked; trace,
 * span and session ids are remapped so it is a session of its own.
 */
export function hostileVariant(lines: readonly string[], service: string): string[] {
  const remap = (hex: string): string => createHash('sha256').update(`hostile:${hex}`).digest('hex').slice(0, hex.length);
  return lines.map((line) => {
    const req = JSON.parse(line) as ExportRequest;
    for (const rs of req.resourceSpans) {
      for (const a of rs.resource.attributes) if (a.key === 'service.name') a.value = { stringValue: `${service}${a.value.stringValue?.endsWith('-client') ? '-client' : ''}` };
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) {
          s.traceId = remap(s.traceId);
          s.spanId = remap(s.spanId);
          for (const a of s.attributes) {
            const v = a.value.stringValue;
            if (v === undefined) continue;
            if (a.key === 'forkwatch.session.key') a.value = { stringValue: remap(v) };
            else if (a.key === 'gen_ai.tool.name') a.value = { stringValue: `${v}${HOSTILE_MARKUP}` };
            else if (a.key === 'forkwatch.sse.event.id' || a.key === 'forkwatch.resume.last_event_id') a.value = { stringValue: `${HOSTILE_MARKUP}${v}` };
          }
        }
      }
    }
    return JSON.stringify(req);
  });
}

/** POSTs each line to the detector's OTLP/HTTP receiver; throws on any non-200. */
export async function sendCapture(otlpUrl: string, lines: readonly string[]): Promise<void> {
  for (const body of lines) {
    const res = await fetch(`${otlpUrl}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(15_000) });
    if (res.status !== 200) throw new Error(`OTLP export answered ${res.status}: ${await res.text()}`);
  }
}
