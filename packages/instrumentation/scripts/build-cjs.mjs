// The CommonJS build (dist/cjs/), for `require('@forkwatch/instrumentation...')` and
// `node --require @forkwatch/instrumentation/register`: every ESM file tsc wrote to dist/ is
// transformed file by file (no bundling: one module instance per file, relative `./x.js` imports
// resolve inside dist/cjs/), `import()` stays a dynamic import. register.js (top-level await)
// is left out: its CommonJS twin is register-cjs.js.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));
const dist = join(root, 'dist');
const out = join(dist, 'cjs');
rmSync(out, { recursive: true, force: true });

function* jsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (p !== out) yield* jsFiles(p);
    } else if (e.name.endsWith('.js')) yield p;
  }
}

let n = 0;
for (const file of jsFiles(dist)) {
  const rel = relative(dist, file);
  if (rel === 'register.js') continue;
  const { code, warnings } = transformSync(readFileSync(file, 'utf8'), { format: 'cjs', platform: 'node', target: 'node20', sourcefile: rel, logLevel: 'silent' });
  // `import.meta` has no CommonJS meaning; the sources only read it behind `typeof require` checks.
  const unexpected = warnings.filter((w) => w.id !== 'empty-import-meta');
  if (unexpected.length > 0) throw new Error(`${rel}: ${unexpected.map((w) => w.text).join('; ')}`);
  const target = join(out, rel);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, code);
  n++;
}
writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
console.log(`build-cjs: ${n} files to ${relative(root, out)}/`);
