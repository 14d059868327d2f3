import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const APPS = fileURLToPath(new URL('./apps/', import.meta.url));
const PACKAGE_DIR = join(ROOT, 'packages/instrumentation');

/** Where the scratch apps' installs are cached (like the other CI caches), keyed by what they install. */
export const INSTALL_CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'forkwatch', 'install-apps');

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Packs @forkwatch/instrumentation as npm would publish it (from the built dist/) into `dir`; returns the tarball's path. */
export function packInstrumentation(dir: string): string {
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir, '-w', '@forkwatch/instrumentation'], ROOT)) as Array<{ filename: string }>;
  return join(dir, packed[0]!.filename);
}

/** One kind of scratch app: what it installs from the registry besides the packed tarball. */
export interface AppKind {
  name: string;
  dependencies: Record<string, string>;
  /** `npm install --legacy-peer-deps`: how a user gets an SDK outside the peer range installed. */
  legacyPeerDeps?: boolean;
}

/**
 * A fresh copy of the app `kind` in `workRoot`: its node_modules installed from the npm registry
 * (cached under {@link INSTALL_CACHE}, keyed by the dependencies, the instrumentation's peer
 * ranges and the Node major; the first install is a real `npm install` of the packed tarball, so
 * npm's peer resolution is part of it), hard-linked into the copy, and the instrumentation replaced
 * by this run's tarball, unpacked as npm would (it has no dependencies of its own to install).
 * Then the app sources of test/e2e/install/apps/ are copied in.
 */
export function prepareApp(kind: AppKind, tarball: string, workRoot: string): string {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { peerDependencies: unknown; peerDependenciesMeta: unknown };
  const key = createHash('sha256')
    .update(JSON.stringify({ v: 1, kind, peers: pkg.peerDependencies, meta: pkg.peerDependenciesMeta, node: process.versions.node.split('.')[0] }))
    .digest('hex')
    .slice(0, 16);
  const cached = join(INSTALL_CACHE, `${kind.name}-${key}`);
  if (!existsSync(join(cached, 'node_modules', '.forkwatch-install-complete'))) {
    mkdirSync(INSTALL_CACHE, { recursive: true });
    const staging = mkdtempSync(join(INSTALL_CACHE, `.staging-${kind.name}-`));
    writeFileSync(
      join(staging, 'package.json'),
      JSON.stringify({ name: `scratch-${kind.name}`, private: true, dependencies: { ...kind.dependencies, '@forkwatch/instrumentation': `file:${tarball}` } }, null, 2),
    );
    try {
      npm(['install', '--no-package-lock', '--ignore-scripts', '--loglevel=error', ...(kind.legacyPeerDeps ? ['--legacy-peer-deps'] : [])], staging);
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      throw new Error(`npm install of the ${kind.name} scratch app failed: ${String((err as { stderr?: string }).stderr ?? err)}`);
    }
    writeFileSync(join(staging, 'node_modules', '.forkwatch-install-complete'), '');
    rmSync(cached, { recursive: true, force: true });
    renameSync(staging, cached);
  }
  const app = join(workRoot, kind.name);
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `scratch-${kind.name}`, private: true, dependencies: kind.dependencies }, null, 2));
  // Hard links: a copy of an install costs no disk and little time (work and cache share a disk).
  try {
    execFileSync('cp', ['-al', join(cached, 'node_modules'), join(app, 'node_modules')]);
  } catch {
    cpSync(join(cached, 'node_modules'), join(app, 'node_modules'), { recursive: true });
  }
  const ours = join(app, 'node_modules', '@forkwatch', 'instrumentation');
  rmSync(ours, { recursive: true, force: true });
  mkdirSync(ours, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', ours, '--strip-components=1']);
  for (const f of readdirSync(APPS)) cpSync(join(APPS, f), join(app, f));
  return app;
}

/** Whether `app`'s tree holds `name` anywhere (nested copies included). */
export function treeHolds(app: string, name: string): boolean {
  const walk = (nm: string): boolean => {
    if (!existsSync(nm)) return false;
    if (existsSync(join(nm, name, 'package.json'))) return true;
    for (const e of readdirSync(nm, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name.startsWith('.')) continue;
      const dirs = e.name.startsWith('@') ? readdirSync(join(nm, e.name)).map((s) => join(nm, e.name, s)) : [join(nm, e.name)];
      for (const d of dirs) if (walk(join(d, 'node_modules'))) return true;
    }
    return false;
  };
  return walk(join(app, 'node_modules'));
}

/** A work directory next to the cache (same disk, so the hard links work). */
export function workDir(): string {
  mkdirSync(INSTALL_CACHE, { recursive: true });
  return mkdtempSync(join(INSTALL_CACHE, 'run-'));
}
