import { createHash } from 'node:crypto';

/**
 * The incident view's only stylesheet, served from `/ui/assets/forkwatch.css` (same origin, so the
 * CSP allows styles from 'self' and nothing inline). Colours of the timeline live here too: the
 * SVG carries classes, never style attributes.
 */
export const STYLESHEET = `
:root { color-scheme: light; --fg: #1d2330; --muted: #5b6472; --line: #d5dae1; --bad: #c0262d; --warn: #b35c00; --ok: #237a3b; --link: #1f5fbf; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: #f6f7f9; }
header.top { background: #1d2330; color: #fff; padding: 8px 20px; display: flex; gap: 16px; align-items: baseline; }
header.top a { color: #fff; font-weight: 600; text-decoration: none; }
header.top .sub { color: #b9c0cc; }
main { padding: 16px 20px 40px; max-width: 1280px; }
h1 { font-size: 20px; margin: 4px 0 12px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
a { color: var(--link); }
code, .mono, td.id { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f5; font-weight: 600; font-size: 13px; }
td.summary { max-width: 640px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 3px 14px; background: #fff; border: 1px solid var(--line); padding: 10px 14px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
form.filters, form.inline { display: flex; flex-wrap: wrap; gap: 10px; align-items: end; margin: 0 0 12px; }
form label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
input, select, button { font: inherit; padding: 4px 6px; }
button { cursor: pointer; }
.kind { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; font-weight: 600; background: #fde3e4; color: var(--bad); white-space: nowrap; }
.kind.orphaned_progress_token { background: #fff0dc; color: var(--warn); }
.quick a { margin-right: 10px; font-size: 13px; }
.pager { margin-top: 10px; display: flex; gap: 16px; }
.notice { background: #fff8e1; border: 1px solid #f0d58a; padding: 8px 12px; margin: 8px 0; }
.error { background: #fde3e4; border: 1px solid #f2a7aa; padding: 8px 12px; margin: 8px 0; }
.summary-box { background: #fff; border-left: 4px solid var(--bad); padding: 10px 14px; margin: 0 0 14px; }
ol.steps li { margin-bottom: 4px; }
.muted { color: var(--muted); }
figure.timeline-figure { margin: 0; background: #fff; border: 1px solid var(--line); padding: 6px; }
figure.timeline-figure figcaption { font-size: 12px; color: var(--muted); padding: 4px 6px; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 18px; padding: 0; margin: 6px 0 0; font-size: 12px; color: var(--muted); }
ul.legend .sw { display: inline-block; width: 14px; height: 10px; margin-right: 5px; vertical-align: middle; border: 1px solid #888; }
.sw.minted { background: repeating-linear-gradient(45deg, #fde3e4 0 3px, #c0262d 3px 5px); }
.sw.dropped { background: var(--bad); }
.sw.orphaned { background: #fff; border: 2px dashed var(--bad); }
.sw.gap { background: #e6e8ec; }
.sw.resume { background: #6b4fbb; }
.sw.bin { background: #7b8594; }
.login { max-width: 360px; background: #fff; border: 1px solid var(--line); padding: 16px; }
svg.timeline { width: 100%; height: auto; display: block; font-family: system-ui, "DejaVu Sans", sans-serif; }
svg.timeline text { font-size: 10px; fill: #1d2330; }
svg.timeline .lane-bg { fill: #fafbfc; stroke: #e3e6ea; }
svg.timeline .lane-name { font-size: 13px; font-weight: 600; }
svg.timeline .grid { stroke: #eceef1; }
svg.timeline .axis-line { stroke: #9aa3ae; }
svg.timeline text.axis { fill: #5b6472; }
svg.timeline .band rect { stroke: none; opacity: 0.9; }
svg.timeline .band.open-start rect { stroke-dasharray: 3 3; stroke: #888; }
svg.timeline .inc-0 rect, svg.timeline .inc-0.band rect { fill: #dce8fb; }
svg.timeline .inc-1 rect, svg.timeline .inc-1.band rect { fill: #fbe2d0; }
svg.timeline .inc-2 rect, svg.timeline .inc-2.band rect { fill: #d9f0df; }
svg.timeline .inc-3 rect, svg.timeline .inc-3.band rect { fill: #efdcf6; }
svg.timeline .inc-4 rect, svg.timeline .inc-4.band rect { fill: #f7f1c8; }
svg.timeline .inc-5 rect, svg.timeline .inc-5.band rect { fill: #d6eef2; }
svg.timeline .band.minted rect { fill: url(#minted-hatch); stroke: #c0262d; stroke-width: 1.5; }
svg.timeline .hatch-bg { fill: #fde3e4; }
svg.timeline .hatch { stroke: #e89b9e; stroke-width: 3; }
svg.timeline .band-label { font-size: 10px; fill: #2c3340; }
svg.timeline .band-label.minted { fill: #a01d23; font-weight: 700; }
svg.timeline .band-end { stroke: #5b6472; stroke-width: 2; }
svg.timeline .band-end-label { fill: #5b6472; font-style: italic; }
svg.timeline .tick line { stroke: #2f5fa8; stroke-width: 1.5; }
svg.timeline .tick.inc-1 line { stroke: #c4661f; }
svg.timeline .tick.inc-2 line { stroke: #2d8a4b; }
svg.timeline .tick.inc-3 line { stroke: #8c3fb0; }
svg.timeline .tick.inc-4 line { stroke: #8f7a00; }
svg.timeline .tick.inc-5 line { stroke: #1f7f8f; }
svg.timeline .tick.inc-none line { stroke: #6b7380; }
svg.timeline .tick.cited line { stroke-width: 3; }
svg.timeline .tick.replayed line { stroke-dasharray: 3 2; }
svg.timeline .tick.dropped line { stroke: #c0262d; stroke-width: 3; }
svg.timeline .drop-x { stroke: #c0262d; stroke-width: 2; fill: none; }
svg.timeline .regress-mark { fill: #c0262d; }
svg.timeline .tick.dropped .tick-label { fill: #c0262d; text-decoration: line-through; }
svg.timeline .tick-label { font-size: 10px; }
svg.timeline .bin { fill: #7b8594; }
svg.timeline .bin.dropped { fill: #c0262d; }
svg.timeline .gap rect { fill: #e6e8ec; opacity: 0.7; }
svg.timeline .gap-label { fill: #4a515c; font-style: italic; }
svg.timeline .resume line { stroke: #6b4fbb; stroke-width: 1.5; stroke-dasharray: 5 3; }
svg.timeline .resume path { fill: #6b4fbb; }
svg.timeline .resume.bad line { stroke: #c0262d; }
svg.timeline .resume.bad path { fill: #c0262d; }
svg.timeline .resume-label { font-size: 11px; font-weight: 600; fill: #4b3597; }
svg.timeline .resume.bad .resume-label { fill: #a01d23; }
svg.timeline .request line, svg.timeline .request path { stroke: #2c3340; stroke-width: 2; fill: #2c3340; }
svg.timeline .request.orphaned line { stroke: #c0262d; stroke-dasharray: 6 4; }
svg.timeline .request.orphaned path { stroke: #c0262d; fill: #c0262d; }
svg.timeline .request.open line { stroke: #7b8594; stroke-dasharray: 4 4; }
svg.timeline .request.orphaned .request-label { fill: #a01d23; font-weight: 700; }
svg.timeline .flag rect { fill: #c0262d; }
svg.timeline .flag line { stroke: #c0262d; stroke-width: 1; stroke-dasharray: 2 2; }
svg.timeline .flag text { fill: #fff; font-weight: 700; font-size: 10px; }
svg.timeline .flag.kind-orphaned_progress_token rect { fill: #b35c00; }
svg.timeline .flag.kind-orphaned_progress_token line { stroke: #b35c00; }
svg.timeline .flag.current rect { stroke: #1d2330; stroke-width: 2.5; }
`;

/** `sha256-…` of the stylesheet, its ETag. */
export const STYLESHEET_HASH = `sha256-${createHash('sha256').update(STYLESHEET, 'utf8').digest('base64')}`;
