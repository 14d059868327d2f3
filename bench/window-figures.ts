/**
 * The figures of one kept pair of callgrind window dumps (`INSTR_KEEP=1 npm run bench --
 * instructions`), per call: what bench/instruction-dumps.ts prints run by run and
 * bench/instruction-pool.ts pools over runs.
 */
import { readFileSync } from 'node:fs';
import { compileInclusiveInstructions } from './callgrind-costs.js';
import { gcInstructions, jitInstructions, jsInstructions } from './instruction-count.js';

/** Instructions per call of one run (the long window minus the short one, over the calls between). */
export interface WindowFigures {
  total: number;
  /** Without V8's optimizing compiler and deoptimizer (by their functions' names). */
  noJit: number;
  /** Without them and the GC: the bench's headline figure. */
  noJitNoGc: number;
  gc: number;
  /** JIT-compiled JavaScript's own instructions ({@link jsInstructions}). */
  js: number;
  /** Without compilation (inclusive, from V8's compile entry points) and without the GC. */
  noCompileNoGc: number;
}

interface Window {
  total: number;
  jit: number;
  gc: number;
  js: number;
  compile: number;
}

function readWindow(file: string): Window {
  const text = readFileSync(file, 'utf8');
  const m = /^totals:\s+(\d+)/m.exec(text);
  if (!m) throw new Error(`no totals in ${file}`);
  return { total: Number(m[1]), jit: jitInstructions(text), gc: gcInstructions(text), js: jsInstructions(text), compile: compileInclusiveInstructions(text) };
}

/** The figures of the window dumps `shortDump` and `longDump`, `calls` calls apart. */
export function windowFigures(shortDump: string, longDump: string, calls: number): WindowFigures {
  const s = readWindow(shortDump);
  const l = readWindow(longDump);
  const total = (l.total - s.total) / calls;
  const noJit = (l.total - l.jit - (s.total - s.jit)) / calls;
  const gc = (l.gc - s.gc) / calls;
  const noCompileNoGc = (l.total - l.compile - l.gc - (s.total - s.compile - s.gc)) / calls;
  return { total, noJit, noJitNoGc: noJit - gc, gc, js: (l.js - s.js) / calls, noCompileNoGc };
}
