import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SDK_CJS_IDS } from './supported-versions.js';

/** Which SDK 1.x file a CommonJS require loaded. */
export type SdkCjsFile = keyof typeof SDK_CJS_IDS;

/** A require-in-the-middle hook, as far as we use it. */
interface RitmHook {
  unhook(): void;
}
type RitmModule = { Hook: new (modules: string[], options: { internals: boolean }, onrequire: (exports: unknown, name: string, basedir?: string) => unknown) => RitmHook };

// `require` where this file runs as CommonJS (dist/cjs), else one made for this ESM module.
function localRequire(): NodeJS.Require {
  return typeof require === 'function' ? require : createRequire(import.meta.url);
}

/**
 * Hooks the CommonJS requires of the SDK 1.x's Streamable HTTP files by their exact ids:
 * OpenTelemetry's shared require hook looks packages up by their root (`"."`), which the SDK 1.x
 * maps to a file it does not ship, so it never sees them. `onLoad` gets the file's exports, which
 * file it is and the SDK's version, and returns the (patched) exports. Uses the
 * require-in-the-middle of `@opentelemetry/instrumentation` (no dependency of our own); returns
 * undefined when that cannot be found.
 */
export function hookSdkCjs(onLoad: (exports: unknown, file: SdkCjsFile, version: string | undefined) => unknown): RitmHook | undefined {
  let ritm: RitmModule;
  try {
    const req = localRequire();
    const instrumentationDir = dirname(req.resolve('@opentelemetry/instrumentation'));
    ritm = req(req.resolve('require-in-the-middle', { paths: [instrumentationDir] })) as RitmModule;
  } catch {
    return undefined;
  }
  const fileOf = new Map<string, SdkCjsFile>();
  for (const [file, ids] of Object.entries(SDK_CJS_IDS) as Array<[SdkCjsFile, readonly string[]]>) for (const id of ids) fileOf.set(id, file);
  return new ritm.Hook([...fileOf.keys()], { internals: true }, (exports, name, basedir) => {
    const file = fileOf.get(name.split('\\').join('/'));
    if (!file) return exports;
    return onLoad(exports, file, basedir ? versionAt(basedir) : undefined);
  });
}

function versionAt(basedir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(basedir, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}
